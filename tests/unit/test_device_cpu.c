/* test_device_cpu: the CPU device keeps CUDA's stream and event semantics: a host function that has not
 * finished stays in flight, an event recorded after it is not complete until it is, waiting on the event
 * (or enqueueing on the same stream) completes it in order, and elapsed times are consistent. Also the
 * element-wise operations' exact results on small inputs. No MPI. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "device.h"

typedef struct {
  int polls_left; /* polls until the "collective" reports completion */
  int finished, blocked;
  int order, *clock;
} fake_job;

static ddp_result fake_fn(void *arg, int block, int *done) {
  fake_job *j = arg;
  if (block) j->blocked = 1;
  if (block || --j->polls_left <= 0) {
    *done = 1;
    if (!j->finished) j->order = ++*j->clock;
    j->finished = 1;
  } else {
    *done = 0;
  }
  return DDP_OK;
}

int main(void) {
  ddp_device *d;
  CHECK(device_cpu_create(&d, 1) == DDP_OK, "create");
  ddp_stream *s, *c;
  ddp_event *e1 = NULL, *e2 = NULL, *e0 = NULL;
  CHECK(d->stream_create(d, &s, 0) == DDP_OK && d->stream_create(d, &c, 1) == DDP_OK, "streams");
  CHECK(d->event_create(d, &e0, 1) == DDP_OK && d->event_create(d, &e1, 1) == DDP_OK &&
            d->event_create(d, &e2, 1) == DDP_OK, "events");

  int clock = 0;
  fake_job a = {.polls_left = 1000, .clock = &clock}, b = {.polls_left = 1000, .clock = &clock};
  CHECK(d->event_record(d, e0, c) == DDP_OK, "record on an idle stream");
  int done = 0;
  CHECK(d->event_query(d, e0, &done) == DDP_OK && done, "an event on an idle stream is complete at once");
  CHECK(d->host_func(d, c, fake_fn, &a) == DDP_OK, "host func a");
  CHECK(d->event_record(d, e1, c) == DDP_OK, "record after a");
  CHECK(d->host_func(d, c, fake_fn, &b) == DDP_OK, "host func b");
  CHECK(d->event_record(d, e2, c) == DDP_OK, "record after b");
  CHECK(!a.finished && !b.finished, "both still in flight");
  CHECK(d->event_query(d, e1, &done) == DDP_OK && !done, "e1 pending while a is in flight");
  /* Work on another stream polls in-flight work but does not wait for it. */
  float x[4] = {1, -2, 3, -4}, y[4];
  CHECK(d->cast(d, s, y, DT_F32, x, DT_F32, 4, 2.0f, 0) == DDP_OK, "cast on s");
  CHECK(!a.finished, "s does not wait for c");
  /* Waiting on e1 completes a (blocking) but not b. */
  CHECK(d->stream_wait_event(d, s, e1) == DDP_OK, "wait e1");
  CHECK(a.finished && a.blocked && !b.finished, "waiting on e1 completes a only");
  CHECK(d->event_query(d, e1, &done) == DDP_OK && done, "e1 complete");
  CHECK(d->event_query(d, e2, &done) == DDP_OK && !done, "e2 still pending");
  /* An operation on c itself is ordered after b. */
  CHECK(d->memset_zero(d, y, sizeof y, c) == DDP_OK, "op on c");
  CHECK(b.finished && b.order > a.order, "c's op completed b first, in order");
  CHECK(d->event_query(d, e2, &done) == DDP_OK && done, "e2 complete");
  float ms01 = -1, ms12 = -1;
  CHECK(d->event_elapsed_ms(d, &ms01, e0, e1) == DDP_OK && d->event_elapsed_ms(d, &ms12, e1, e2) == DDP_OK,
        "elapsed");
  CHECK(ms01 >= 0 && ms12 >= 0, "elapsed times are ordered (%g, %g)", ms01, ms12);
  /* Polling finishes a host function that is ready, without anyone waiting. */
  fake_job q = {.polls_left = 2, .clock = &clock};
  ddp_event *e3;
  CHECK(d->event_create(d, &e3, 1) == DDP_OK, "event");
  CHECK(d->host_func(d, c, fake_fn, &q) == DDP_OK && d->event_record(d, e3, c) == DDP_OK, "enqueue q");
  for (int i = 0; i < 3 && !q.finished; i++) CHECK(d->cast(d, s, y, DT_F32, x, DT_F32, 4, 1.0f, 0) == DDP_OK, "op");
  CHECK(q.finished && !q.blocked, "progress by polling, not by blocking");
  CHECK(d->event_query(d, e3, &done) == DDP_OK && done, "e3 complete after polling");

  /* Element-wise operations. */
  CHECK(d->cast(d, s, y, DT_F32, x, DT_F32, 4, 0.5f, 0) == DDP_OK && y[0] == 0.5f && y[3] == -2.0f, "cast x0.5");
  uint16_t h[4];
  CHECK(d->cast(d, s, h, DT_BF16, x, DT_F32, 4, 1.0f, 0) == DDP_OK && h[0] == 0x3f80 && h[1] == 0xc000, "cast to bf16");
  float a_[4] = {1, 0, -1, 2}, da[4] = {5, 6, 7, 8}, dz[4];
  CHECK(d->relu_backward(d, s, dz, da, a_, DT_F32, 4) == DDP_OK && dz[0] == 5 && dz[1] == 0 && dz[2] == 0 && dz[3] == 8,
        "relu backward masks where the output was not positive");
  ddp_step_state st = {0, 0, 4.0f, 0};
  double loss[2] = {0, 0};
  float yv[2] = {3, -1}, tv[2] = {1, 1}, g[2];
  CHECK(d->loss_grad(d, s, g, yv, tv, DT_F32, 2, 0.5f, 0.25f, &st, 1, loss) == DDP_OK, "loss_grad");
  CHECK(loss[0] == 0.5 * 0.25 * (4 + 4), "loss share = 0.5 * inv_global_batch * sum sq (%g)", loss[0]);
  CHECK(g[0] == 2 * 0.5f * 4.0f && g[1] == 0, "dz = (y - t) * inv_local_batch * scale where y > 0 (%g %g)", g[0], g[1]);
  float gr[3] = {8, -4, INFINITY};
  CHECK(d->check_finite(d, s, gr, DT_F32, 2, &st) == DDP_OK && !st.found_inf, "finite gradients pass");
  uint16_t gr16[3] = {bf16_from_f32(8), bf16_from_f32(-4), 0x7fc0};
  CHECK(d->check_finite(d, s, gr16, DT_BF16, 2, &st) == DDP_OK && !st.found_inf, "finite bf16 gradients pass");
  CHECK(d->check_finite(d, s, gr16, DT_BF16, 3, &st) == DDP_OK && st.found_inf == 1, "a bf16 NaN is found");
  st.found_inf = 0;
  CHECK(d->check_finite(d, s, gr, DT_F32, 3, &st) == DDP_OK && st.found_inf == 1, "an inf is found");
  float w[2] = {1, 1}, gw[2] = {1, 2}, gout[2] = {-7, -7};
  CHECK(d->sgd(d, s, w, gw, DT_F32, gout, NULL, NULL, DT_F32, 2, 0.1f, 0, &st, 1) == DDP_OK && w[0] == 1 && w[1] == 1 &&
            gout[0] == -7,
        "sgd skips entirely when found_inf");
  float scale_hist[2];
  int skip_hist[2];
  scaler_cfg sc = {4, 2, 0.5, 2000};
  CHECK(d->step_end(d, s, &st, &sc, scale_hist, skip_hist) == DDP_OK, "step_end");
  CHECK(scale_hist[0] == 4 && skip_hist[0] == 1 && st.scale == 2 && st.found_inf == 0 && st.step == 1,
        "step_end records, backs off, clears, advances");
  /* scale 2: the gradient is unscaled (halved) inside the update and copied out. */
  CHECK(d->sgd(d, s, w, gw, DT_F32, gout, NULL, NULL, DT_F32, 2, 0.5f, 0, &st, 1) == DDP_OK, "sgd step");
  CHECK(w[0] == 0.75f && w[1] == 0.5f && gout[0] == 0.5f && gout[1] == 1.0f, "w -= lr * g / scale; g_out (%g %g)", w[0],
        w[1]);
  float v[2] = {1, 1};
  uint16_t w16[2], g16[2] = {bf16_from_f32(1), bf16_from_f32(2)};
  w[0] = 1, w[1] = 1;
  CHECK(d->sgd(d, s, w, g16, DT_BF16, NULL, v, w16, DT_BF16, 2, 1.0f, 0.5f, NULL, 0) == DDP_OK, "momentum");
  CHECK(v[0] == 1.5f && v[1] == 2.5f && w[0] == -0.5f && w[1] == -1.5f && w16[0] == 0xbf00,
        "bf16 gradient; v = m v + g; w -= lr v; w16 = round(w)");
  CHECK(d->inject_nan(d, s, w, DT_F32, &st, 0) == DDP_OK && !isnan(w[0]), "no injection at other steps");
  CHECK(d->inject_nan(d, s, w, DT_F32, &st, 1) == DDP_OK && isnan(w[0]), "injection at the step");
  /* GEMM: 2x3 (col-major) times 3x2 with transposes and the relu epilogue, in bf16 storage. */
  float A[6] = {1, 2, 3, 4, 5, 6}; /* A^T stored: A is 3x2 col-major -> op(A) = A^T is 2x3 */
  float B[6] = {1, 0, -1, 2, 1, 0}; /* B 3x2 col-major */
  float C[4];
  ddp_gemm gm = {.trans_a = 1, .trans_b = 0, .m = 2, .n = 2, .k = 3, .a = A, .lda = 3, .b = B, .ldb = 3, .c = C,
                 .ldc = 2, .ab_type = DT_F32, .c_type = DT_F32, .relu = 1};
  CHECK(d->gemm(d, s, &gm) == DDP_OK, "gemm");
  /* op(A) rows: [1 2 3], [4 5 6]; B cols: [1 0 -1], [2 1 0] -> C = [[-2, 4], [-2, 13]], relu -> [[0,4],[0,13]] */
  CHECK(C[0] == 0 && C[1] == 0 && C[2] == 4 && C[3] == 13, "gemm result with relu: %g %g %g %g", C[0], C[1], C[2], C[3]);
  uint16_t A16[6], B16[6], C16[4];
  CHECK(d->cast(d, s, A16, DT_F16, A, DT_F32, 6, 1, 0) == DDP_OK && d->cast(d, s, B16, DT_F16, B, DT_F32, 6, 1, 0) == DDP_OK, "to fp16");
  gm.a = A16, gm.b = B16, gm.c = C16, gm.ab_type = DT_F16, gm.c_type = DT_F16, gm.relu = 0;
  CHECK(d->gemm(d, s, &gm) == DDP_OK && fp16_to_f32(C16[0]) == -2 && fp16_to_f32(C16[3]) == 13, "fp16 gemm");

  d->event_destroy(d, e0);
  d->event_destroy(d, e1);
  d->event_destroy(d, e2);
  d->event_destroy(d, e3);
  d->destroy(d);
  return check_summary();
}
