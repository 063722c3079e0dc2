// The Go reference: the workloads of benchmarks/workloads.h (and stage 5's
// preemption latency) written in Go, so that the course's runtimes can be
// compared with the real one on the same machine. `./course bench` runs it
// when `go` is installed (Debian's golang-go, Go 1.19) and puts its figures
// in the same table.
//
// Usage: go run . [-quick] [-filter REGEXP] > go.json
// (the echo rows also need $GMP_ECHO_CLIENT: benchmarks/echo_client, echo.go)
//
// Output: JSON in Google Benchmark's shape ({"context": ..., "benchmarks":
// [...]}), names "workload/go/procs:N", with items_per_second (and
// rss_bytes/goroutine, measured in a fresh process; waited_ms),
// so the report reads both the same way.
// Each workload's figure is the mean of the runs after a warm-up run: at
// least 5, and as many as fill half a second, as Google Benchmark times a
// stage's row (its default minimum time); the echo rows' are the mean of
// 5 runs of the client after an untimed one (echo.go); the cold ones and
// the preemption latency are medians of 5 (processes, or runs).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const items = 1000 // as kItems in stages_bench.cc

// A warm row's runs: at least minRuns, and at least minTime in all (Google
// Benchmark's default minimum time, which the stages' rows use; -quick
// makes it 0).
const minRuns = 5

var minTime = 500 * time.Millisecond

func spawnJoin(n int) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() { wg.Done() }()
	}
	wg.Wait()
}

func yieldPing(n int) {
	var wg sync.WaitGroup
	wg.Add(2)
	for g := 0; g < 2; g++ {
		go func() {
			for i := 0; i < n/2; i++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

func pingPong(capacity int) func(int) {
	return func(n int) {
		ping, pong := make(chan int, capacity), make(chan int, capacity)
		done := make(chan bool)
		go func() {
			for v := range ping {
				pong <- v + 1
			}
			done <- true
		}()
		for i := 0; i < n; i++ {
			ping <- i
			<-pong
		}
		close(ping)
		<-done
	}
}

func fanOutIn(n int) {
	const workers = 4
	jobs, results := make(chan int, 64), make(chan int, 64)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			for j := range jobs {
				results <- j * 2
			}
			wg.Done()
		}()
	}
	go func() {
		for i := 0; i < n; i++ {
			jobs <- i
		}
		close(jobs)
	}()
	sum := 0
	for i := 0; i < n; i++ {
		sum += <-results
	}
	wg.Wait()
	_ = sum
}

var sink uint64

func spinWork(rounds int) {
	x := uint64(rounds)
	for i := 0; i < rounds; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

func imbalanced(n int) {
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			spinWork(100)
			wg.Done()
		}()
	}
	wg.Wait()
}

func spawnStorm(n int) {
	const spawners = 8
	var all sync.WaitGroup
	all.Add(spawners)
	for s := 0; s < spawners; s++ {
		go func() {
			var mine sync.WaitGroup
			mine.Add(n / spawners)
			for i := 0; i < n/spawners; i++ {
				go func() { mine.Done() }()
			}
			mine.Wait()
			all.Done()
		}()
	}
	all.Wait()
}

func skynetNode(c chan int, num, size int) {
	if size == 1 {
		c <- num
		return
	}
	rc := make(chan int)
	for i := 0; i < 10; i++ {
		go skynetNode(rc, num+i*(size/10), size/10)
	}
	sum := 0
	for i := 0; i < 10; i++ {
		sum += <-rc
	}
	c <- sum
}

func skynet(n int) {
	c := make(chan int)
	go skynetNode(c, 0, n)
	if sum := <-c; sum != n*(n-1)/2 {
		panic("skynet: wrong sum")
	}
}

func selectFanIn(n int) {
	const producers = 4
	cs := []chan int{make(chan int), make(chan int), make(chan int), make(chan int)}
	each := n / producers
	for _, c := range cs {
		go func(c chan int) {
			for i := 0; i < each; i++ {
				c <- i
			}
		}(c)
	}
	sum := 0
	for i := 0; i < each*producers; i++ {
		var v int
		select {
		case v = <-cs[0]:
		case v = <-cs[1]:
		case v = <-cs[2]:
		case v = <-cs[3]:
		}
		sum += v
	}
	if sum != producers*each*(each-1)/2 {
		panic("select fan-in: wrong sum")
	}
}

func selectPingPong(n int) {
	ping, pong, stop := make(chan int), make(chan int), make(chan int)
	done := make(chan bool)
	go func() {
		for {
			var v int
			var ok bool
			select {
			case v, ok = <-ping:
			case <-stop:
			}
			if !ok {
				break
			}
			select {
			case pong <- v + 1:
			case <-stop:
			}
		}
		done <- true
	}()
	for i := 0; i < n; i++ {
		select {
		case ping <- i:
		case <-stop:
		}
		select {
		case <-pong:
		case <-stop:
		}
	}
	close(ping)
	<-done
}

const timerRounds = 10 // as TimerLoops::kRounds

func timerLoops(n int) {
	var wg sync.WaitGroup
	wg.Add(n / timerRounds)
	for i := 0; i < n/timerRounds; i++ {
		go func() {
			for r := 0; r < timerRounds; r++ {
				time.Sleep(time.Millisecond)
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

func timerChurn(n int) {
	const churners = 8
	var wg sync.WaitGroup
	wg.Add(churners)
	for g := 0; g < churners; g++ {
		go func() {
			for i := 0; i < n/churners; i++ {
				t := time.AfterFunc(time.Hour, func() {})
				if !t.Stop() {
					panic("timer set/stop churn: the timer had fired")
				}
			}
			wg.Done()
		}()
	}
	wg.Wait()
}

func contextCancelChildren(n int) {
	parent, cancelParent := context.WithCancel(context.Background())
	cancels := make([]context.CancelFunc, n)
	for i := range cancels {
		_, cancels[i] = context.WithCancel(parent)
	}
	for _, cancel := range cancels {
		cancel()
	}
	cancelParent()
	if parent.Err() != context.Canceled {
		panic("context cancel children: the parent was not cancelled")
	}
}

func contextDeepChain(n int) {
	root, cancel := context.WithCancel(context.Background())
	ctx, leaf := root, cancel
	for i := 0; i < n; i++ {
		ctx, leaf = context.WithCancel(ctx) // each cancel dropped but the last
	}
	cancel()
	<-ctx.Done()
	leaf()
}

func rssBytes() float64 {
	var size, resident int64
	f, err := os.Open("/proc/self/statm")
	if err != nil {
		return 0
	}
	defer f.Close()
	fmt.Fscan(f, &size, &resident)
	return float64(resident * int64(os.Getpagesize()))
}

var lastRSSPerGoroutine float64

func parked(n int) {
	gate := make(chan int)
	var started, finished sync.WaitGroup
	started.Add(n)
	finished.Add(n)
	before := rssBytes()
	for i := 0; i < n; i++ {
		go func() {
			started.Done()
			<-gate
			finished.Done()
		}()
	}
	started.Wait()
	lastRSSPerGoroutine = (rssBytes() - before) / float64(n)
	close(gate)
	finished.Wait()
}

// Go keeps dead goroutines' stacks for reuse, so only a process's first
// run shows their pages arrive: the memory figure comes from a fresh copy
// of this program (-rss-child N), as the suite's comes from a fresh runtime.
func rssPerGoroutineInChild(n, procs int) float64 {
	exe, err := os.Executable()
	if err != nil {
		return 0
	}
	cmd := exec.Command(exe, "-rss-child", strconv.Itoa(n))
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
	out, err := cmd.Output()
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	return v
}

// A 1 ms sleeper behind a 100 ms loop without calls, on 1 P: how long it
// waits (stage 5's preemption latency).
func sleeperBehindLoopMs() float64 {
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	done := make(chan bool)
	go func() {
		until := time.Now().Add(100 * time.Millisecond)
		u := 0
		for time.Now().Before(until) {
			for i := 0; i < 1000000; i++ {
				u -= 2
			}
		}
		sink = uint64(u)
		done <- true
	}()
	runtime.Gosched() // the loop starts
	t := time.Now()
	time.Sleep(time.Millisecond)
	waited := time.Since(t)
	<-done
	return float64(waited.Microseconds()) / 1000
}

type result struct {
	Name           string  `json:"name"`
	RunType        string  `json:"run_type"`
	Iterations     int     `json:"iterations"`
	RealTime       float64 `json:"real_time"`
	TimeUnit       string  `json:"time_unit"`
	ItemsPerSecond float64 `json:"items_per_second,omitempty"`
	RSS            float64 `json:"rss_bytes/goroutine,omitempty"`
	WaitedMs       float64 `json:"waited_ms,omitempty"`
	PeakRSSMB      float64 `json:"peak_rss_MB,omitempty"`
	FaultsPerG     float64 `json:"faults/goroutine,omitempty"`
	MaxAlive       float64 `json:"max_alive,omitempty"`
	// Counters by name ("cpu_ns/rt"...), written beside the fields above,
	// zeros included.
	Counters map[string]float64 `json:"-"`
}

// MarshalJSON writes r's fields and its Counters in one object, as Google
// Benchmark writes a row's counters.
func (r result) MarshalJSON() ([]byte, error) {
	type plain result
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Counters) == 0 {
		return b, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range r.Counters {
		m[k] = v
	}
	return json.Marshal(m)
}

// The cold workloads (benchmarks/cold_bench.h): one run in a fresh process.
var coldWorkloads = map[string]func(int){"spawn": spawnJoin, "skynet": skynet}

// In the child (-cold-child NAME): runs the workload once and prints the
// run's wall time in ns, the process's peak RSS in KiB and minor faults,
// the most goroutines alive at once, and the goroutines made, as the
// course's child does. The most alive is sampled every 100 us
// (runtime.NumGoroutine, the sampler itself left out): Go keeps no such
// count.
func coldChild(name string, n int) {
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	var maxAlive int64
	stop := make(chan bool)
	go func() {
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if g := int64(runtime.NumGoroutine() - 1); g > atomic.LoadInt64(&maxAlive) {
				atomic.StoreInt64(&maxAlive, g)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	start := time.Now()
	coldWorkloads[name](n)
	wall := time.Since(start)
	close(stop)
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	made := int64(n) + 1 // spawn: n and main
	if name == "skynet" {
		made = 1
		for level := 1; level <= n; level *= 10 {
			made += int64(level)
		}
	}
	fmt.Println(wall.Nanoseconds(), peakRSSKiB(), after.Minflt-before.Minflt,
		atomic.LoadInt64(&maxAlive), made)
}

// peakRSSKiB is this process's peak resident memory in KiB: VmHWM in
// /proc/self/status, the high-water mark of its own address space. Not
// Rusage.Maxrss, which Linux carries across execve: a child started by a
// large parent would report the parent's peak.
func peakRSSKiB() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				if v, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					return v
				}
			}
		}
	}
	return -1
}

// The parent's side: 5 fresh processes, the median wall time, and the
// counters of the median run.
func coldInChildren(name string, n, procs int) (result, bool) {
	exe, err := os.Executable()
	if err != nil {
		return result{}, false
	}
	type run struct{ wall, rss, faults, alive, made float64 }
	var runs []run
	for r := 0; r < 5; r++ {
		cmd := exec.Command(exe, "-cold-child", name, "-cold-n", strconv.Itoa(n))
		cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(procs))
		out, err := cmd.Output()
		if err != nil {
			return result{}, false
		}
		var x run
		if _, err := fmt.Sscan(string(out), &x.wall, &x.rss, &x.faults, &x.alive, &x.made); err != nil {
			return result{}, false
		}
		runs = append(runs, x)
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].wall < runs[j].wall })
	m := runs[len(runs)/2]
	return result{RunType: "iteration", Iterations: 5, RealTime: m.wall / 1e6,
		TimeUnit: "ms", ItemsPerSecond: float64(n) / m.wall * 1e9,
		PeakRSSMB: m.rss / 1024, FaultsPerG: m.faults / m.made, MaxAlive: m.alive}, true
}

// The mean of xs: what Google Benchmark reports for the stages' rows (a
// run's total time over its iterations), so that a ratio to Go compares
// like with like. On the course's VM a run is now and then much slower
// than its neighbours; a median would drop it on Go's side only.
func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

func median(xs []float64) float64 {
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func main() {
	quick := flag.Bool("quick", false, "smaller skynet and parked runs")
	filter := flag.String("filter", ".", "only benchmarks whose name matches")
	rssChild := flag.Int("rss-child", 0, "internal: park N goroutines once, print bytes per goroutine")
	coldName := flag.String("cold-child", "", "internal: run cold workload NAME once (-cold-n items), print its figures")
	coldN := flag.Int("cold-n", 0, "internal: see -cold-child")
	flag.Parse()
	if *coldName != "" {
		coldChild(*coldName, *coldN)
		return
	}
	if *rssChild > 0 {
		parked(*rssChild)
		fmt.Println(lastRSSPerGoroutine)
		return
	}
	match, err := regexp.Compile(*filter)
	if err != nil {
		fmt.Fprintf(os.Stderr, "benchmarks/go: -filter %q: %v\n", *filter, err)
		os.Exit(2)
	}
	bigSkynet, bigParked, bigTimers, bigChurn := 1000000, 100000, 100000*timerRounds, 100000
	if *quick {
		bigSkynet, bigParked, bigTimers, bigChurn = 10000, 10000, 10000*timerRounds, 10000
		minTime = 0
	}
	workloads := []struct {
		name string
		n    int
		f    func(int)
	}{
		{"spawn+join", items, spawnJoin},
		{"yield", items, yieldPing},
		{"chan ping-pong", items, pingPong(0)},
		{"chan ping-pong (buffered)", items, pingPong(1)},
		{"fan-out/fan-in", items, fanOutIn},
		{"imbalanced spawn", items, imbalanced},
		{"spawn storm", items, spawnStorm},
		{"skynet", bigSkynet, skynet},
		{"parked goroutines", bigParked, parked},
		{"select fan-in", items, selectFanIn},
		{"select ping-pong", items, selectPingPong},
		{"timers 100k x 1ms", bigTimers, timerLoops},
		{"timer set/stop churn", bigChurn, timerChurn},
		{"context cancel children", bigChurn, contextCancelChildren},
		{"context deep chain", bigChurn, contextDeepChain},
	}
	out := []result{} // "benchmarks": [] when -filter matches nothing here
	for _, w := range workloads {
		for _, p := range []int{1, 2, 4, 8} {
			name := fmt.Sprintf("%s/go/procs:%d", w.name, p)
			if !match.MatchString(name) {
				continue
			}
			runtime.GOMAXPROCS(p)
			w.f(w.n) // warm up
			var ns []float64
			total := time.Duration(0)
			for len(ns) < minRuns || total < minTime {
				t := time.Now()
				w.f(w.n)
				d := time.Since(t)
				total += d
				ns = append(ns, float64(d.Nanoseconds()))
			}
			m := mean(ns)
			res := result{Name: name, RunType: "iteration", Iterations: len(ns),
				RealTime: m, TimeUnit: "ns", ItemsPerSecond: float64(w.n) / m * 1e9}
			if w.name == "parked goroutines" {
				res.RSS = rssPerGoroutineInChild(w.n, p)
			}
			fmt.Fprintf(os.Stderr, "go: %-40s %12.0f ns/run\n", name, m)
			out = append(out, res)
		}
	}
	coldItems := 1000000
	if *quick {
		coldItems = 10000
	}
	for _, w := range []string{"spawn", "skynet"} {
		for _, p := range []int{1, 2} {
			name := fmt.Sprintf("cold %s/go/procs:%d", w, p)
			if !match.MatchString(name) {
				continue
			}
			res, ok := coldInChildren(w, coldItems, p)
			if !ok {
				fmt.Fprintf(os.Stderr, "benchmarks/go: %s: the child failed\n", name)
				os.Exit(1)
			}
			res.Name = name
			fmt.Fprintf(os.Stderr, "go: %-40s %12.0f ms\n", name, res.RealTime)
			out = append(out, res)
		}
	}
	out = append(out, echoRows(match.MatchString, *quick)...)
	if name := "preemption latency/go"; match.MatchString(name) {
		var ms []float64
		for r := 0; r < 5; r++ {
			ms = append(ms, sleeperBehindLoopMs())
		}
		m := median(ms)
		fmt.Fprintf(os.Stderr, "go: %-40s %12.1f ms\n", name, m)
		out = append(out, result{Name: name, RunType: "iteration", Iterations: 5,
			RealTime: m, TimeUnit: "ms", WaitedMs: m})
	}
	doc := map[string]any{
		"context": map[string]any{
			"date":       time.Now().Format(time.RFC3339),
			"go_version": runtime.Version(),
			"num_cpus":   runtime.NumCPU(),
			"executable": "benchmarks/go",
		},
		"benchmarks": out,
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(err)
	}
}
