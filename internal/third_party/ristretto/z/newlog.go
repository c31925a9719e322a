/*
 * SPDX-FileCopyrightText: © Hypermode Inc. <hello@hypermode.com>
 * SPDX-License-Identifier: Apache-2.0
 */

package z

import "strings"

// Fuscia's change (README.md): a log file Badger creates is advised for random access.
//
// Badger creates each memtable log (*.mem, twice the memtable's size) and value-log file
// (*.vlog, twice the value-log file size, 128 MiB in Fuscia's store) by truncating a new file
// to its full size and mapping it whole, then writes it from the start through the mapping.
// The first write to a page of a file mapping faults the page in, and the kernel reads around
// the fault: as much as the device's read-ahead (read_ahead_kb, 8 MiB on the test VM), all of it
// holes, which it fills with zeros and adds to the page cache, where they stay until the file is
// truncated or unmapped. A process that writes a few entries and closes the store (a one-shot
// `fuscia apply`) zeroed ~11 MiB for the two logs every open Badger creates: ~5% of such an
// apply's CPU (perf, docs/performance.md, issue 20 item 3). With MADV_RANDOM the kernel faults
// in only the page written. Badger reads a memtable log only through a new mapping at the next
// open (unadvised), and values from a value-log file at random offsets; tables, written whole
// once created, keep the default.

// adviseNewLog advises MADV_RANDOM for buf, the mapping of filename, a file just created at its
// full size, when it is one of Badger's log files. An error leaves the default advice: it only
// costs the read-around.
func adviseNewLog(filename string, buf []byte) {
	if len(buf) == 0 || !(strings.HasSuffix(filename, ".mem") || strings.HasSuffix(filename, ".vlog")) {
		return
	}
	_ = madvise(buf, false)
}
