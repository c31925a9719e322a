/*
 * SPDX-FileCopyrightText: © 2017-2025 Istari Digital, Inc.
 * SPDX-License-Identifier: Apache-2.0
 */

package y

import "errors"

// Fuscia: this copy has no zstd. Linking github.com/klauspost/compress/zstd ran the initializers
// of its internal snapref and cpuinfo packages at every start of every fuscia command (~0.2-0.8
// ms of a one-shot apply), and Fuscia's store has never been compressed (options.None since its
// first version; docs/state.md, "Badger options"). Open refuses options.ZSTD with ErrNoZSTD, and
// a table whose blocks say zstd fails to read with it.

// ErrNoZSTD is the answer of everything zstd in this copy.
var ErrNoZSTD = errors.New("this copy of Badger has no zstd compression: Fuscia's store is never compressed")

// ZSTDDecompress would decompress a block using ZSTD algorithm.
func ZSTDDecompress(dst, src []byte) ([]byte, error) {
	return nil, ErrNoZSTD
}

// ZSTDCompress would compress a block using ZSTD algorithm.
func ZSTDCompress(dst, src []byte, compressionLevel int) ([]byte, error) {
	return nil, ErrNoZSTD
}

// ZSTDCompressBound returns the worst case size needed for a destination buffer.
// Klauspost ZSTD library does not provide any API for Compression Bound. This
// calculation is based on the DataDog ZSTD library.
// See https://pkg.go.dev/github.com/DataDog/zstd#CompressBound
func ZSTDCompressBound(srcSize int) int {
	lowLimit := 128 << 10 // 128 kB
	var margin int
	if srcSize < lowLimit {
		margin = (lowLimit - srcSize) >> 11
	}
	return srcSize + (srcSize >> 8) + margin
}
