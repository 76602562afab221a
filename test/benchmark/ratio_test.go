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

// BenchmarkRealCloudRatio compares the controller with two references on the same cloud in the
// same run: Octavia alone building the same load balancers until every child is ACTIVE
// (ideal.alone: nothing else running, on networks that exist), the floor of what a user can
// wait for; and the ideal client (ideal_test.go), which does all of the cluster's work as soon as
// it may. Each reference runs with both strategies, populated and stepwise, and the faster one
// by median is the one compared with. For one zone (the single load balancer, as upstream users
// have it), two zones, their deletion and the in-place migration to two zones (the ideal client
// only), it runs the references and the controller, interleaved, CAPO_BENCH_RUNS times (default
// 3), and prints a table of medians and spreads with the ratio of the controller to each
// reference. CAPO_BENCH_STRATEGIES picks the ideal client's strategies ("none" for Octavia alone
// only). Same variables as BenchmarkRealCloud; it needs two zones.
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
				column := octaviaColumn + string(strategy)
				name := fmt.Sprintf("bench-alone-%s-%d", strategy, round)
				active, deleted, err := x.alone(ctx, name+"-one", vipSubnets[:1], zones[:1])
				must(b, err)
				t.add("1 zone", column, active)
				t.add("delete, 1 zone", column, deleted)
				active, deleted, err = x.alone(ctx, name+"-two", vipSubnets, zones)
				must(b, err)
				t.add("2 zones", column, active)
				t.add("delete, 2 zones", column, deleted)
			}
			for _, strategy := range strategies() {
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
		name := strings.NewReplacer(" ", "-", ",", "").Replace(row)
		if r := t.ratio(row); r > 0 {
			b.ReportMetric(r, "ratio-"+name)
		}
		if r := t.octaviaRatio(row); r > 0 {
			b.ReportMetric(r, "octavia-ratio-"+name)
		}
	}
}

// octaviaColumn prefixes the columns of Octavia alone building (or deleting) the same load
// balancers, one per strategy (ideal.alone).
const octaviaColumn = "octavia:"

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

// limit is the column of the ideal client's faster strategy of row, by median.
func (t *ratioTable) limit(row string) string { return t.fastest(row, "limit:") }

// octavia is the column of Octavia alone's faster strategy of row, by median.
func (t *ratioTable) octavia(row string) string { return t.fastest(row, octaviaColumn) }

// fastest is the column whose name starts with prefix with the lowest median in row.
func (t *ratioTable) fastest(row, prefix string) string {
	best := ""
	for column, ds := range t.values[row] {
		if strings.HasPrefix(column, prefix) && (best == "" || median(ds) < median(t.values[row][best])) {
			best = column
		}
	}
	return best
}

// ratio is the controller's median over the limit's (0 when either is missing).
func (t *ratioTable) ratio(row string) float64 {
	return t.over(row, t.limit(row))
}

// octaviaRatio is the controller's median over Octavia alone's faster strategy (0 when either
// is missing).
func (t *ratioTable) octaviaRatio(row string) float64 {
	return t.over(row, t.octavia(row))
}

func (t *ratioTable) over(row, column string) float64 {
	ref, ours := median(t.values[row][column]), median(t.values[row]["ours"])
	if column == "" || ref == 0 || ours == 0 {
		return 0
	}
	return ours.Seconds() / ref.Seconds()
}

// String is the table a reviewer compares between commits: for each case, the median and range
// in seconds of the controller, of Octavia alone and of the ideal client with each strategy, and
// the ratios of the controller to the faster strategy of each reference ("-" where a reference
// did not run).
func (t *ratioTable) String(runs int) string {
	cell := func(ds []time.Duration) string {
		if len(ds) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f (%.1f-%.1f)", median(ds).Seconds(), slices.Min(ds).Seconds(), slices.Max(ds).Seconds())
	}
	var sb strings.Builder
	ratio := func(r float64) string {
		if r == 0 {
			return "-"
		}
		return fmt.Sprintf("%.2f", r)
	}
	fmt.Fprintf(&sb, "\n| case (%d runs, seconds: median (min-max)) | ours | Octavia alone: populated | Octavia alone: stepwise | ideal: populated | ideal: stepwise | ours / Octavia alone | ours / ideal |\n|---|---|---|---|---|---|---|---|\n", runs)
	for _, row := range t.rows {
		v := t.values[row]
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", row, cell(v["ours"]), cell(v[octaviaColumn+"populated"]), cell(v[octaviaColumn+"stepwise"]),
			cell(v["limit:populated"]), cell(v["limit:stepwise"]), ratio(t.octaviaRatio(row)), ratio(t.ratio(row)))
	}
	return sb.String()
}
