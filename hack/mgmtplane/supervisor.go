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

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// crashLoopCap is the longest pause before a manager that keeps exiting is started again.
const crashLoopCap = 30 * time.Second

// supervisor keeps the plane's managers running as the kubelet keeps a pod's containers: once the
// plane is ready, a manager that exits without being asked to is started again, at once the first
// time and after a pause doubling up to crashLoopCap while it keeps exiting within a minute of its
// start. A crash of the provider, or a kill an end-to-end spec asks for, so costs the plane
// nothing. Its control endpoint kills, stops and starts managers by name.
type supervisor struct {
	logs   string
	exited chan exit

	mu    sync.Mutex
	procs map[string]*process
	// crashes counts a manager's exits in a row that came within a minute of its start.
	crashes map[string]int
	// ready is set once the plane is ready: before, an exit fails the plane.
	ready bool
	// closed is set when the plane stops: nothing is started again after that.
	closed bool
}

// shutdown makes sure no pending restart starts a manager while or after the plane stops.
func (s *supervisor) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
}

func newSupervisor(logs string, procs ...*process) *supervisor {
	s := &supervisor{logs: logs, exited: make(chan exit, 16), procs: map[string]*process{}, crashes: map[string]int{}}
	for _, p := range procs {
		s.procs[p.name] = p
	}
	return s
}

// add makes p known to the control endpoint without starting it.
func (s *supervisor) add(p *process) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs[p.name] = p
}

// exitedUnasked handles an exit nobody asked for: after the plane is ready, the manager is started
// again (after the crash loop's pause); before, it is an error.
func (s *supervisor) exitedUnasked(e exit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[e.name]
	if !s.ready || p == nil {
		return fmt.Errorf("%s exited; see %s.log in %s", e.name, e.name, s.logs)
	}
	n := 1
	if time.Since(p.started) < time.Minute {
		n = s.crashes[e.name] + 1
	}
	s.crashes[e.name] = n
	pause := time.Duration(0)
	if n > 1 {
		pause = min(time.Second<<(n-2), crashLoopCap)
	}
	logf("%s exited unasked (%d in a row); starting it again in %s", e.name, n, pause)
	time.AfterFunc(pause, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed || p.running() || p.stopping.Load() {
			return // the plane stops, or the control endpoint started or stopped it meanwhile
		}
		if err := p.start(s.logs, s.exited); err != nil {
			logf("starting %s again: %v", e.name, err)
		}
	})
	return nil
}

// routes adds the control endpoint's manager operations to mux:
//
//	POST /managers/{name}/kill[?restart=false]  SIGKILL; by default the supervisor starts it again
//	                                           at once, as after a crash; returns once it died
//	POST /managers/{name}/stop                 SIGTERM, and it stays stopped
//	POST /managers/{name}/start                starts it; returns once it is ready
//	GET  /managers                             name, state and starts of each manager
func (s *supervisor) routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /managers/{name}/{op}", func(w http.ResponseWriter, r *http.Request) {
		name, op := r.PathValue("name"), r.PathValue("op")
		start := time.Now()
		pid, err := s.control(r.Context(), name, op, r.URL.Query().Get("restart") != "false")
		if err != nil {
			logf("%s %s: %v", op, name, err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		logf("%s %s (pid %d) in %s", op, name, pid, time.Since(start).Round(time.Millisecond))
		_, _ = fmt.Fprintf(w, "%s=%s\npid=%d\ntook=%s\n", op, name, pid, time.Since(start).Round(time.Millisecond))
	})
	mux.HandleFunc("GET /managers", func(w http.ResponseWriter, _ *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for name, p := range s.procs {
			_, _ = fmt.Fprintf(w, "%s running=%t starts=%d\n", name, p.running(), p.runs)
		}
	})
}

// control kills, stops or starts the named manager; it returns the pid the operation concerned.
func (s *supervisor) control(ctx context.Context, name, op string, restart bool) (int, error) {
	s.mu.Lock()
	p := s.procs[name]
	if p == nil {
		s.mu.Unlock()
		return 0, fmt.Errorf("no manager %q", name)
	}
	switch op {
	case "kill", "stop":
		defer s.mu.Unlock()
		if !p.running() {
			return 0, fmt.Errorf("%s is not running", name)
		}
		pid := p.cmd.Process.Pid
		if op == "stop" {
			p.stop()
			return pid, nil
		}
		if err := p.kill(); err != nil {
			return pid, err
		}
		if restart {
			s.crashes[name] = 0
			return pid, p.start(s.logs, s.exited)
		}
		return pid, nil
	case "start":
		if p.running() {
			s.mu.Unlock()
			return p.cmd.Process.Pid, nil
		}
		err := p.start(s.logs, s.exited)
		s.mu.Unlock()
		if err != nil {
			return 0, err
		}
		return p.cmd.Process.Pid, p.waitReady(ctx)
	}
	s.mu.Unlock()
	return 0, fmt.Errorf("no operation %q: kill, stop or start", op)
}

// serveControl serves mux on 127.0.0.1:port until the returned server is closed.
func serveControl(port int, mux *http.ServeMux) (*http.Server, error) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := server.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("control endpoint: %v", err)
		}
	}()
	return server, nil
}

// webhookService stands in for the Service in front of the provider's replicas: the webhook
// configurations point at its port, and it passes each connection (TLS untouched) to the first
// replica that accepts one, so that admission keeps working while one replica is down.
func webhookService(port int, replicas []int) (io.Closer, error) {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				if !errors.Is(err, net.ErrClosed) {
					logf("webhook service: %v", err)
				}
				return
			}
			go relay(in, replicas)
		}
	}()
	return l, nil
}

func relay(in net.Conn, replicas []int) {
	defer func() { _ = in.Close() }()
	var refused []string
	for _, port := range replicas {
		out, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			refused = append(refused, err.Error())
			continue
		}
		defer func() { _ = out.Close() }()
		done := make(chan struct{}, 2)
		go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
		go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
		<-done
		return
	}
	logf("webhook service: no replica answers: %s", strings.Join(refused, "; "))
}
