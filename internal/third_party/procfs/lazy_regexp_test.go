// Copyright 2026 The Fuscia Authors
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
// http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package procfs

import (
	"os"
	"reflect"
	"strconv"
	"sync"
	"syscall"
	"testing"
)

// lazyRegexps lists every expression of the package (Fuscia's change, lazy_regexp.go).
var lazyRegexps = map[string]*lazyRegexp{
	"cpuinfoClockRegexp": cpuinfoClockRegexp, "cpuinfoS390XProcessorRegexp": cpuinfoS390XProcessorRegexp,
	"statusLineRE": statusLineRE, "recoveryLineBlocksRE": recoveryLineBlocksRE,
	"recoveryLinePctRE": recoveryLinePctRE, "recoveryLineFinishRE": recoveryLineFinishRE,
	"recoveryLineSpeedRE": recoveryLineSpeedRE, "componentDeviceRE": componentDeviceRE,
	"rPos": rPos, "rFlags": rFlags, "rMntID": rMntID, "rIno": rIno, "rInotify": rInotify,
	"rInotifyParts": rInotifyParts, "limitsMatch": limitsMatch,
	"procSMapsHeaderLine": procSMapsHeaderLine, "cpuLineRE": cpuLineRE, "procLineRE": procLineRE,
	"slabSpace": slabSpace, "slabVer": slabVer, "slabHeader": slabHeader, "nodeZoneRE": nodeZoneRE,
}

// compiledAtInit names the expressions already compiled when the tests start.
var compiledAtInit []string

func TestMain(m *testing.M) {
	for name, re := range lazyRegexps {
		if re.re != nil {
			compiledAtInit = append(compiledAtInit, name)
		}
	}
	os.Exit(m.Run())
}

func TestNoRegexpCompiledAtInit(t *testing.T) {
	if len(compiledAtInit) > 0 {
		t.Fatalf("compiled by the package's initialization: %v", compiledAtInit)
	}
}

// TestLazyRegexpsCompile compiles every expression, from many goroutines at once (run with
// -race): a typo would otherwise panic only when a program first reads the file it parses.
func TestLazyRegexpsCompile(t *testing.T) {
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name, re := range lazyRegexps {
				if re.get() == nil || re.get().String() != re.expr {
					t.Errorf("%s: compiled %v, want %q", name, re.get(), re.expr)
				}
			}
		}()
	}
	wg.Wait()
}

// TestSelfAsTheProcessCollectorReadsIt reads this process's files as the Prometheus process
// collector does; Limits parses with limitsMatch.
func TestSelfAsTheProcessCollectorReadsIt(t *testing.T) {
	p, err := NewProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	stat, err := p.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if stat.ResidentMemory() <= 0 || stat.VirtualMemory() == 0 {
		t.Errorf("stat: rss %d, vsize %d", stat.ResidentMemory(), stat.VirtualMemory())
	}
	if _, err := stat.StartTime(); err != nil {
		t.Errorf("start time: %v", err)
	}
	if n, err := p.FileDescriptorsLen(); err != nil || n < 3 {
		t.Errorf("open fds: %d, %v", n, err)
	}
	limits, err := p.Limits()
	if err != nil {
		t.Fatal(err)
	}
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	if uint64(limits.OpenFiles) != nofile.Cur {
		t.Errorf("limits: open files %d, getrlimit says %d", limits.OpenFiles, nofile.Cur)
	}
	if _, err := p.Netstat(); err != nil {
		t.Errorf("netstat: %v", err)
	}
}

func TestFDInfoOfSelf(t *testing.T) {
	f, err := os.Open("lazy_regexp.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	p, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	info, err := p.FDInfo(strconv.Itoa(int(f.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	if info.Pos != "10" || info.Flags == "" || info.MntID == "" || info.Ino == "" {
		t.Errorf("fdinfo: %+v", info)
	}
}

func TestParseProcSchedstat(t *testing.T) {
	got, err := parseProcSchedstat("411605849 93680043 79")
	if err != nil {
		t.Fatal(err)
	}
	want := ProcSchedstat{RunningNanoseconds: 411605849, WaitingNanoseconds: 93680043, RunTimeslices: 79}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// TestEvalComponentDevicesFlags is upstream's (mdstat_test.go), with reflect instead of go-cmp.
func TestEvalComponentDevicesFlags(t *testing.T) {
	devices, err := evalComponentDevices([]string{
		"sda1[0](F)",
		"sdb1[1](W)",
		"sdc1[2](J)",
		"sdd1[3](R)",
		"sde1[4](W)(F)",
		"sdg1[6](S)",
		"sdf1[5]",
	})
	if err != nil {
		t.Fatalf("unexpected error: %s", err)
	}
	want := []MDStatComponent{
		{Name: "sda1", DescriptorIndex: 0, Faulty: true},
		{Name: "sdb1", DescriptorIndex: 1, WriteMostly: true},
		{Name: "sdc1", DescriptorIndex: 2, Journal: true},
		{Name: "sdd1", DescriptorIndex: 3, Replacement: true},
		{Name: "sde1", DescriptorIndex: 4, WriteMostly: true, Faulty: true},
		{Name: "sdg1", DescriptorIndex: 6, Spare: true},
		{Name: "sdf1", DescriptorIndex: 5},
	}
	if !reflect.DeepEqual(want, devices) {
		t.Errorf("component devices: got %+v, want %+v", devices, want)
	}
}

// TestParseMDStatRecovery parses a resyncing array, through statusLineRE and the
// recoveryLine expressions (a line of upstream's fixture).
func TestParseMDStatRecovery(t *testing.T) {
	mds, err := parseMDStat([]byte(`Personalities : [raid1]
md127 : active raid1 sdi2[0] sdj2[1]
      312319552 blocks [2/2] [UU]
      [=>...................]  resync =  9.6% (29953344/312319552) finish=21.2min speed=221860K/sec

unused devices: <none>
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(mds) != 1 {
		t.Fatalf("got %d arrays", len(mds))
	}
	md := mds[0]
	if md.Name != "md127" || md.DisksActive != 2 || md.DisksTotal != 2 || md.BlocksTotal != 312319552 ||
		md.BlocksSynced != 29953344 || md.BlocksSyncedPct != 9.6 || md.BlocksSyncedFinishTime != 21.2 ||
		md.BlocksSyncedSpeed != 221860 || len(md.Devices) != 2 {
		t.Errorf("parsed %+v", md)
	}
}
