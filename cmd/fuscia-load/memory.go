package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// serve's memory, read from /proc/PID/status (Linux).

// memSample is one reading of serve's /proc/PID/status.
type memSample struct {
	At      time.Duration // since the measurement began
	VmRSS   int64         // bytes, like the other sizes
	RssAnon int64
	RssFile int64
	VmHWM   int64
	Threads int64
}

// readStatus reads serve's memory figures from /proc/PID/status (Linux).
func readStatus(pid int) (memSample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memSample{}, err
	}
	return parseStatus(b), nil
}

// parseStatus reads the figures of memSample from the text of a /proc/PID/status; sizes are
// in bytes. A figure it does not find is 0.
func parseStatus(b []byte) memSample {
	var m memSample
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if len(f) > 1 && f[1] == "kB" {
			n *= 1024
		}
		switch k {
		case "VmRSS":
			m.VmRSS = n
		case "RssAnon":
			m.RssAnon = n
		case "RssFile":
			m.RssFile = n
		case "VmHWM":
			m.VmHWM = n
		case "Threads":
			m.Threads = n
		}
	}
	return m
}

// sampler reads /proc/PID/status every interval until stopped; it keeps the samples.
type sampler struct {
	mu      sync.Mutex
	samples []memSample
	errs    int
	stop    chan struct{}
	done    chan struct{}
}

// startSampler samples pid now and then every interval, At measured from t0, passing each
// sample to each (if not nil) on the sampler's goroutine. The caller must call finish.
func startSampler(pid int, every time.Duration, t0 time.Time, each func(memSample)) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	take := func() {
		m, err := readStatus(pid)
		s.mu.Lock()
		if err != nil {
			s.errs++
			s.mu.Unlock()
			return
		}
		m.At = time.Since(t0)
		s.samples = append(s.samples, m)
		s.mu.Unlock()
		if each != nil {
			each(m)
		}
	}
	go func() {
		defer close(s.done)
		take()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
				take()
			}
		}
	}()
	return s
}

// finish stops the sampler, waits for its goroutine and returns the samples taken.
func (s *sampler) finish() []memSample {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]memSample(nil), s.samples...)
}

// maxMem is the largest of each figure over ss (At is 0).
func maxMem(ss []memSample) memSample {
	var m memSample
	for _, s := range ss {
		m.VmRSS = max(m.VmRSS, s.VmRSS)
		m.RssAnon = max(m.RssAnon, s.RssAnon)
		m.RssFile = max(m.RssFile, s.RssFile)
		m.VmHWM = max(m.VmHWM, s.VmHWM)
		m.Threads = max(m.Threads, s.Threads)
	}
	return m
}
