/*
Copyright 2026 The capo-multiaz Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package benchmark

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	managerscheme "github.com/capo-multiaz/cluster-api-provider-openstack/pkg/scheme"
)

// BenchmarkRealCloudRatio compares the controller with the ideal client (ideal_test.go) on the
// same cloud in the same run: for one zone (the single load balancer, as upstream users have
// it), two zones, their deletion and the in-place migration to two zones, it runs the ideal
// client with both strategies and the controller, interleaved, CAPO_BENCH_RUNS times (default
// 3), and prints a table of medians and spreads with the ratio of the controller to the limit
// (the faster strategy's median). Same variables as BenchmarkRealCloud; it needs two zones.
func BenchmarkRealCloudRatio(b *testing.B) {
	cloudsYAML, cloudName, zones := realCloud(b)
	if len(zones) < 2 {
		b.Skip("the ratio benchmark needs two zones")
	}
	zones = zones[:2]
	runs := 3
	if v, err := strconv.Atoi(os.Getenv("CAPO_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	ctx := ctrl.LoggerInto(context.Background(), logr.Discard())
	scheme, err := managerscheme.New()
	must(b, err)
	_, _, cl := benchIdentity(ctx, b, scheme, cloudsYAML, cloudName)
	var cleanup []func()
	defer func() {
		for i := len(cleanup) - 1; i >= 0; i-- {
			cleanup[i]()
		}
	}()
	_, mapping := operatorLBNetwork(ctx, b, cl, "ratio", zones, &cleanup)
	vipSubnets := []string{*mapping[0].Subnet.ID, *mapping[1].Subnet.ID}

	t := newRatioTable()
	for b.Loop() {
		for round := range runs {
			for _, strategy := range []idealStrategy{populated, stepwise} {
				x, err := newIdeal(ctx, cl, strategy)
				must(b, err)
				name := fmt.Sprintf("bench-ideal-%s-%d", strategy, round)
				lim := "limit:" + string(strategy)

				start := time.Now()
				c, err := x.create(ctx, name+"-one", zones[:1], nil)
				t.add("1 zone", lim, time.Since(start))
				mustIdeal(b, ctx, x, c, true, err)
				start = time.Now()
				must(b, x.delete(ctx, c, true))
				t.add("delete, 1 zone", lim, time.Since(start))

				start = time.Now()
				c, err = x.create(ctx, name+"-two", zones, vipSubnets)
				t.add("2 zones", lim, time.Since(start))
				mustIdeal(b, ctx, x, c, false, err)
				start = time.Now()
				must(b, x.delete(ctx, c, false))
				t.add("delete, 2 zones", lim, time.Since(start))

				c, err = x.create(ctx, name+"-mig", zones[:1], vipSubnets[:1])
				mustIdeal(b, ctx, x, c, false, err)
				start = time.Now()
				err = x.migrate(ctx, c, name+"-mig", zones, vipSubnets)
				t.add("migration to 2 zones", lim, time.Since(start))
				mustIdeal(b, ctx, x, c, false, err)
				must(b, x.delete(ctx, c, false))
			}
			one := driveReal(b, cloudsYAML, cloudName, zones[:1], single)
			t.add("1 zone", "ours", one.provisioned)
			t.add("delete, 1 zone", "ours", one.deletion)
			two := driveReal(b, cloudsYAML, cloudName, zones, multi)
			t.add("2 zones", "ours", two.ready)
			t.add("delete, 2 zones", "ours", two.deletion)
			mig := driveReal(b, cloudsYAML, cloudName, zones, migrate)
			t.add("migration to 2 zones", "ours", mig.migration)
		}
	}
	fmt.Print(t.String(runs))
	for _, row := range t.rows {
		b.ReportMetric(t.ratio(row), "ratio-"+strings.NewReplacer(" ", "-", ",", "").Replace(row))
	}
}

// mustIdeal fails the benchmark when the ideal client failed, deleting what it made first.
func mustIdeal(b *testing.B, ctx context.Context, x *ideal, c *idealCluster, onSubnet bool, err error) {
	if err != nil {
		_ = x.delete(ctx, c, onSubnet)
		b.Fatal(err)
	}
}

// ratioTable holds the seconds each row (a case) took for each column (ours, or the ideal
// client with a strategy), one value per run.
type ratioTable struct {
	rows   []string
	values map[string]map[string][]time.Duration
}

func newRatioTable() *ratioTable { return &ratioTable{values: map[string]map[string][]time.Duration{}} }

func (t *ratioTable) add(row, column string, d time.Duration) {
	if t.values[row] == nil {
		t.rows = append(t.rows, row)
		t.values[row] = map[string][]time.Duration{}
	}
	t.values[row][column] = append(t.values[row][column], d)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// limit is the column of the faster strategy of row, by median.
func (t *ratioTable) limit(row string) string {
	best := ""
	for column, ds := range t.values[row] {
		if strings.HasPrefix(column, "limit:") && (best == "" || median(ds) < median(t.values[row][best])) {
			best = column
		}
	}
	return best
}

func (t *ratioTable) ratio(row string) float64 {
	lim := median(t.values[row][t.limit(row)])
	if lim == 0 {
		return 0
	}
	return median(t.values[row]["ours"]).Seconds() / lim.Seconds()
}

// String is the table a reviewer compares between commits: for each case, the controller's and
// each strategy's median and range in seconds, the limit (the faster strategy) and the ratio.
func (t *ratioTable) String(runs int) string {
	cell := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f (%.1f-%.1f)", median(ds).Seconds(), slices.Min(ds).Seconds(), slices.Max(ds).Seconds())
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\n| case (%d runs, seconds: median (min-max)) | ours | limit: populated | limit: stepwise | limit | ours / limit |\n|---|---|---|---|---|---|\n", runs)
	for _, row := range t.rows {
		v := t.values[row]
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %.2f |\n", row, cell(v["ours"]), cell(v["limit:populated"]), cell(v["limit:stepwise"]),
			strings.TrimPrefix(t.limit(row), "limit:"), t.ratio(row))
	}
	return sb.String()
}
