/* test_stats: percentiles by linear interpolation (numpy's default), on sorted and unsorted samples. */
#include <math.h>

#include "check.h"
#include "stats.h"

static int near(double a, double b) { return fabs(a - b) < 1e-12; }

int main(void) {
  double x[] = {5, 1, 4, 2, 3};
  ddp_stats s = stats_compute(x, 5);
  CHECK(near(s.median, 3) && near(s.min, 1) && near(s.max, 5) && near(s.mean, 3), "odd count");
  CHECK(near(s.p10, 1.4) && near(s.p90, 4.6), "p10 %g p90 %g", s.p10, s.p90);
  CHECK(x[0] == 5 && x[4] == 3, "input untouched");
  double y[] = {10, 20, 30, 40};
  CHECK(near(stats_percentile(y, 4, 0.5), 25), "even count: mean of the middle two");
  CHECK(near(stats_percentile(y, 4, 0.0), 10) && near(stats_percentile(y, 4, 1.0), 40), "ends");
  double one = 7;
  s = stats_compute(&one, 1);
  CHECK(near(s.median, 7) && near(s.p10, 7) && near(s.p90, 7), "one sample");
  s = stats_compute(x, 0);
  CHECK(isnan(s.median) && s.n == 0, "empty sample gives NaN");
  return check_summary();
}
