// Echo against the course: Go's server, a goroutine per connection as the
// course's (benchmarks/echo.cc), loaded by the same client program
// (benchmarks/echo_client.cc, given by $GMP_ECHO_CLIENT), with the same
// counters per round trip as benchmarks/io_bench.h's rows: the server's
// CPU time and its system calls by kind (counted by perf, when it can).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"
)

// echoTrips: round trips per connection, as io_bench.h's echo_trips.
func echoTrips(conns int, quick bool) int {
	total := 20000
	if quick {
		total = 2000
	}
	n := total / conns
	if conns == 1 {
		n = total / 2
	}
	if n < 20 {
		n = 20
	}
	return n
}

// echoServer listens on 127.0.0.1 and serves each connection with a
// goroutine that reads and writes back until EOF; closing the listener
// stops it, and wait() waits for the connections' goroutines.
type echoServer struct {
	l  net.Listener
	wg sync.WaitGroup
}

func startEchoServer() *echoServer {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	s := &echoServer{l: l}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, werr := c.Write(buf[:n]); werr != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return s
}

func (s *echoServer) port() int { return s.l.Addr().(*net.TCPAddr).Port }

func (s *echoServer) stop() {
	s.l.Close()
	s.wg.Wait()
}

// clientRun is echo_client's JSON line.
type clientRun struct {
	RoundTrips  float64            `json:"round_trips"`
	EchoNs      float64            `json:"echo_ns"`
	ServerCPUNs float64            `json:"server_cpu_ns"`
	Syscalls    map[string]float64 `json:"syscalls"`
}

// runEchoClient runs the client against this process's server, answering
// its "start" and "end" marks at once (the course's side reads its
// runtime's counters there; Go's has none to read).
func runEchoClient(client string, port, conns, trips int, syscalls bool) (clientRun, error) {
	args := []string{"--port", strconv.Itoa(port), "--conns", strconv.Itoa(conns),
		"--round-trips", strconv.Itoa(trips), "--server-pid", strconv.Itoa(os.Getpid()), "--mark"}
	if syscalls {
		args = append(args, "--syscalls")
	}
	cmd := exec.Command(client, args...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	var run clientRun
	if err := cmd.Start(); err != nil {
		return run, err
	}
	out := bufio.NewReader(outPipe)
	var last string
	for {
		line, err := out.ReadString('\n')
		if line == "start\n" || line == "end\n" {
			io.WriteString(in, "\n")
		} else if strings.TrimSpace(line) != "" {
			last = line
		}
		if err != nil {
			break
		}
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return run, fmt.Errorf("echo_client: %v", err)
	}
	err := json.Unmarshal([]byte(last), &run)
	return run, err
}

// echoRows runs "echo N conns/go/procs:P" for the rows `match` keeps,
// and "echo 1 conn, one CPU" at procs 1 and 2 (io_bench.h's rows).
func echoRows(match func(string) bool, quick bool) []result {
	client := os.Getenv("GMP_ECHO_CLIENT")
	var out []result
	perfOK := true
	for _, row := range []struct {
		conns  int
		oneCPU bool
	}{{1, false}, {100, false}, {1000, false}, {1, true}} {
		conns := row.conns
		workload := fmt.Sprintf("echo %d conns", conns)
		if conns == 1 {
			workload = "echo 1 conn"
		}
		if row.oneCPU {
			workload += ", one CPU"
		}
		for _, p := range []int{1, 2, 4, 8} {
			if row.oneCPU && p > 2 {
				break
			}
			name := fmt.Sprintf("%s/go/procs:%d", workload, p)
			if !match(name) {
				continue
			}
			if client == "" {
				fmt.Fprintf(os.Stderr, "benchmarks/go: %s: no GMP_ECHO_CLIENT, left out\n", name)
				continue
			}
			res, ok := echoRow(client, conns, p, quick, row.oneCPU, &perfOK)
			if !ok {
				os.Exit(1)
			}
			res.Name = name
			fmt.Fprintf(os.Stderr, "go: %-40s %12.0f ns/round trip\n", name, 1e9/res.ItemsPerSecond)
			out = append(out, res)
		}
	}
	return out
}

// echoRow: a warm-up run, then 5 timed ones (as the other Go rows), then
// one counted by perf; with oneCPU, every thread of this process and the
// client on one CPU (pinProcess).
func echoRow(client string, conns, procs int, quick, oneCPU bool, perfOK *bool) (result, bool) {
	runtime.GOMAXPROCS(procs)
	if oneCPU {
		restore, ok := pinProcess()
		if !ok {
			fmt.Fprintf(os.Stderr, "benchmarks/go: echo: sched_setaffinity failed: no row on one CPU\n")
			return result{}, false
		}
		defer restore()
	}
	s := startEchoServer()
	defer s.stop()
	trips := echoTrips(conns, quick)
	if _, err := runEchoClient(client, s.port(), conns, trips, false); err != nil {
		fmt.Fprintf(os.Stderr, "benchmarks/go: echo: %v\n", err)
		return result{}, false
	}
	var rts, ns, cpu float64
	for r := 0; r < 5; r++ {
		run, err := runEchoClient(client, s.port(), conns, trips, false)
		if err != nil {
			fmt.Fprintf(os.Stderr, "benchmarks/go: echo: %v\n", err)
			return result{}, false
		}
		rts, ns, cpu = rts+run.RoundTrips, ns+run.EchoNs, cpu+run.ServerCPUNs
	}
	res := result{RunType: "iteration", Iterations: 5, RealTime: ns / 5,
		TimeUnit: "ns", ItemsPerSecond: rts / ns * 1e9,
		Counters: map[string]float64{"cpu_ns/rt": cpu / rts}}
	if *perfOK {
		run, err := runEchoClient(client, s.port(), conns, trips, true)
		if err != nil {
			*perfOK = false
			fmt.Fprintf(os.Stderr, "benchmarks/go: echo: no system call counts (%v)\n", err)
		} else {
			per := func(k string) float64 { return run.Syscalls[k] / run.RoundTrips }
			for k, v := range map[string]float64{
				"sys/rt": per("all"), "read/rt": per("read"), "eagain/rt": per("read_eagain"),
				"write/rt":      per("write_echo") + per("sendto_echo"),
				"wake_w/rt":     per("write_wakeup"),
				"epoll_wait/rt": per("epoll_wait") + per("epoll_pwait") + per("epoll_pwait2"),
				"epoll_ctl/rt":  per("epoll_ctl"), "futex/rt": per("futex"),
				"cs/rt": per("context_switches")} {
				res.Counters[k] = v
			}
		}
	}
	return res, true
}

// cpuMask is a sched_setaffinity mask of 1024 CPUs.
type cpuMask [16]uint64

// pinProcess runs every thread of this process on one CPU, the lowest it
// may use (threads made later inherit it, and so does the client it
// starts), as io_bench.h's OneCpu does for the course's server; the
// function it returns puts the old mask back on every thread. false if the
// kernel refused.
func pinProcess() (func(), bool) {
	var old, one cpuMask
	if _, _, e := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0,
		unsafe.Sizeof(old), uintptr(unsafe.Pointer(&old))); e != 0 {
		return nil, false
	}
	for i := 0; i < 1024; i++ {
		if old[i/64]&(1<<(i%64)) != 0 {
			one[i/64] = 1 << (i % 64)
			break
		}
	}
	if !setProcessMask(&one) {
		setProcessMask(&old)
		return nil, false
	}
	return func() { setProcessMask(&old) }, true
}

// setProcessMask gives every thread of this process the mask; twice, so
// that a thread made by one not yet pinned is pinned too. A thread gone
// meanwhile (ESRCH) is skipped.
func setProcessMask(m *cpuMask) bool {
	for pass := 0; pass < 2; pass++ {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return false
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			_, _, e := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid),
				unsafe.Sizeof(*m), uintptr(unsafe.Pointer(m)))
			if e != 0 && e != syscall.ESRCH {
				return false
			}
		}
	}
	return true
}
