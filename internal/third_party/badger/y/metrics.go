/*
 * SPDX-FileCopyrightText: © 2017-2025 Istari Digital, Inc.
 * SPDX-License-Identifier: Apache-2.0
 */

package y

import (
	"sync"
	"sync/atomic"
)

const (
	BADGER_METRIC_PREFIX = "badger_"
)

// These variables are global and have cumulative values for all kv stores.
// Naming convention of metrics: {badger_version}_{singular operation}_{granularity}_{component}
//
// Fuscia: upstream published them with expvar in the package's init. Importing expvar alone
// publishes the process's memstats and command line and registers /debug/vars on
// http.DefaultServeMux at every start of a program linking Badger, and Fuscia's store runs
// with metrics off (MetricsEnabled = false). They are kept here in Int and Map, with their
// upstream names, for Badger's own code (DB.Size reads two of them); nothing publishes them.
var (
	// lsmSize has size of the LSM in bytes
	lsmSize = &Map{name: BADGER_METRIC_PREFIX + "size_bytes_lsm"}
	// vlogSize has size of the value log in bytes
	vlogSize = &Map{name: BADGER_METRIC_PREFIX + "size_bytes_vlog"}
	// pendingWrites tracks the number of pending writes.
	pendingWrites = &Map{name: BADGER_METRIC_PREFIX + "write_pending_num_memtable"}

	// These are cumulative

	// VLOG METRICS
	// numReads has cumulative number of reads from vlog
	numReadsVlog = &Int{name: BADGER_METRIC_PREFIX + "read_num_vlog"}
	// numWrites has cumulative number of writes into vlog
	numWritesVlog = &Int{name: BADGER_METRIC_PREFIX + "write_num_vlog"}
	// numBytesRead has cumulative number of bytes read from VLOG
	numBytesReadVlog = &Int{name: BADGER_METRIC_PREFIX + "read_bytes_vlog"}
	// numBytesVlogWritten has cumulative number of bytes written into VLOG
	numBytesVlogWritten = &Int{name: BADGER_METRIC_PREFIX + "write_bytes_vlog"}

	// LSM METRICS
	// numBytesRead has cumulative number of bytes read from LSM tree
	numBytesReadLSM = &Int{name: BADGER_METRIC_PREFIX + "read_bytes_lsm"}
	// numBytesWrittenToL0 has cumulative number of bytes written into LSM Tree
	numBytesWrittenToL0 = &Int{name: BADGER_METRIC_PREFIX + "write_bytes_l0"}
	// numLSMGets is number of LSM gets
	numLSMGets = &Map{name: BADGER_METRIC_PREFIX + "get_num_lsm"}
	// numBytesCompactionWritten is the number of bytes written in the lsm tree due to compaction
	numBytesCompactionWritten = &Map{name: BADGER_METRIC_PREFIX + "write_bytes_compaction"}
	// numLSMBloomHits is number of LMS bloom hits
	numLSMBloomHits = &Map{name: BADGER_METRIC_PREFIX + "hit_num_lsm_bloom_filter"}

	// DB METRICS
	// numGets is number of gets -> Number of get requests made
	numGets = &Int{name: BADGER_METRIC_PREFIX + "get_num_user"}
	// number of get queries in which we actually get a result
	numGetsWithResults = &Int{name: BADGER_METRIC_PREFIX + "get_with_result_num_user"}
	// number of iterators created, these would be the number of range queries
	numIteratorsCreated = &Int{name: BADGER_METRIC_PREFIX + "iterator_num_user"}
	// numPuts is number of puts -> Number of puts requests made
	numPuts = &Int{name: BADGER_METRIC_PREFIX + "put_num_user"}
	// numMemtableGets is number of memtable gets -> Number of get requests made on memtable
	numMemtableGets = &Int{name: BADGER_METRIC_PREFIX + "get_num_memtable"}
	// numCompactionTables is the number of tables being compacted
	numCompactionTables = &Int{name: BADGER_METRIC_PREFIX + "compaction_current_num_lsm"}
	// Total writes by a user in bytes
	numBytesWrittenUser = &Int{name: BADGER_METRIC_PREFIX + "write_bytes_user"}
)

func NumIteratorsCreatedAdd(enabled bool, val int64) {
	addInt(enabled, numIteratorsCreated, val)
}

func NumGetsWithResultsAdd(enabled bool, val int64) {
	addInt(enabled, numGetsWithResults, val)
}

func NumReadsVlogAdd(enabled bool, val int64) {
	addInt(enabled, numReadsVlog, val)
}

func NumBytesWrittenUserAdd(enabled bool, val int64) {
	addInt(enabled, numBytesWrittenUser, val)
}

func NumWritesVlogAdd(enabled bool, val int64) {
	addInt(enabled, numWritesVlog, val)
}

func NumBytesReadsVlogAdd(enabled bool, val int64) {
	addInt(enabled, numBytesReadVlog, val)
}

func NumBytesReadsLSMAdd(enabled bool, val int64) {
	addInt(enabled, numBytesReadLSM, val)
}

func NumBytesWrittenVlogAdd(enabled bool, val int64) {
	addInt(enabled, numBytesVlogWritten, val)
}

func NumBytesWrittenToL0Add(enabled bool, val int64) {
	addInt(enabled, numBytesWrittenToL0, val)
}

func NumBytesCompactionWrittenAdd(enabled bool, key string, val int64) {
	addToMap(enabled, numBytesCompactionWritten, key, val)
}

func NumGetsAdd(enabled bool, val int64) {
	addInt(enabled, numGets, val)
}

func NumPutsAdd(enabled bool, val int64) {
	addInt(enabled, numPuts, val)
}

func NumMemtableGetsAdd(enabled bool, val int64) {
	addInt(enabled, numMemtableGets, val)
}

func NumCompactionTablesAdd(enabled bool, val int64) {
	addInt(enabled, numCompactionTables, val)
}

func LSMSizeSet(enabled bool, key string, val *Int) {
	storeToMap(enabled, lsmSize, key, val)
}

func VlogSizeSet(enabled bool, key string, val *Int) {
	storeToMap(enabled, vlogSize, key, val)
}

func PendingWritesSet(enabled bool, key string, val *Int) {
	storeToMap(enabled, pendingWrites, key, val)
}

func NumLSMBloomHitsAdd(enabled bool, key string, val int64) {
	addToMap(enabled, numLSMBloomHits, key, val)
}

func NumLSMGetsAdd(enabled bool, key string, val int64) {
	addToMap(enabled, numLSMGets, key, val)
}

func LSMSizeGet(enabled bool, key string) *Int {
	return getFromMap(enabled, lsmSize, key)
}

func VlogSizeGet(enabled bool, key string) *Int {
	return getFromMap(enabled, vlogSize, key)
}

func addInt(enabled bool, metric *Int, val int64) {
	if !enabled {
		return
	}

	metric.Add(val)
}

func addToMap(enabled bool, metric *Map, key string, val int64) {
	if !enabled {
		return
	}

	metric.Add(key, val)
}

func storeToMap(enabled bool, metric *Map, key string, val *Int) {
	if !enabled {
		return
	}

	metric.Set(key, val)
}

func getFromMap(enabled bool, metric *Map, key string) *Int {
	if !enabled {
		return nil
	}

	return metric.Get(key)
}

// Int is a metric holding one int64, in place of upstream's *expvar.Int (Fuscia).
type Int struct {
	name string
	v    atomic.Int64
}

// Add adds delta to the value.
func (i *Int) Add(delta int64) { i.v.Add(delta) }

// Set sets the value.
func (i *Int) Set(value int64) { i.v.Store(value) }

// Value returns the value.
func (i *Int) Value() int64 { return i.v.Load() }

// Map is a metric holding an Int per key, in place of upstream's *expvar.Map (Fuscia).
type Map struct {
	name string
	mu   sync.Mutex
	m    map[string]*Int
}

// Add adds delta to the Int of key, making it if it is missing.
func (m *Map) Add(key string, delta int64) {
	m.mu.Lock()
	v, ok := m.m[key]
	if !ok {
		if m.m == nil {
			m.m = make(map[string]*Int)
		}
		v = new(Int)
		m.m[key] = v
	}
	m.mu.Unlock()
	v.Add(delta)
}

// Set sets the Int of key.
func (m *Map) Set(key string, v *Int) {
	m.mu.Lock()
	if m.m == nil {
		m.m = make(map[string]*Int)
	}
	m.m[key] = v
	m.mu.Unlock()
}

// Get returns the Int of key, or nil.
func (m *Map) Get(key string) *Int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.m[key]
}
