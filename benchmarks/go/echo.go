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

// echoRows runs "echo N conns/go/procs:P" for the rows `match` keeps.
func echoRows(match func(string) bool, quick bool) []result {
	client := os.Getenv("GMP_ECHO_CLIENT")
	var out []result
	perfOK := true
	for _, conns := range []int{1, 100, 1000} {
		workload := fmt.Sprintf("echo %d conns", conns)
		if conns == 1 {
			workload = "echo 1 conn"
		}
		for _, p := range []int{1, 2, 4, 8} {
			name := fmt.Sprintf("%s/go/procs:%d", workload, p)
			if !match(name) {
				continue
			}
			if client == "" {
				fmt.Fprintf(os.Stderr, "benchmarks/go: %s: no GMP_ECHO_CLIENT, left out\n", name)
				continue
			}
			res, ok := echoRow(client, conns, p, quick, &perfOK)
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
// one counted by perf.
func echoRow(client string, conns, procs int, quick bool, perfOK *bool) (result, bool) {
	runtime.GOMAXPROCS(procs)
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
