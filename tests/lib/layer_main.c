/* layer_main.c: the program of the layer link checks (CMakeLists.txt): it calls nothing. Linked with one
 * layer's whole archive and the layers below it, it builds only when every symbol that layer's files use is
 * defined in that layer or below, so an upward dependency fails the build. */
int main(void) { return 0; }
