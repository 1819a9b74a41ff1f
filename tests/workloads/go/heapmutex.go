// heapmutex.go - a Go program that writes its heap and mutex profiles with
// runtime/pprof, as Go programs are profiled: real pprof files whose
// sample types are not time (alloc_objects, alloc_space, inuse_objects,
// inuse_space; contentions, delay), for ptprof's pprof reader tests
// (tests/e2e/test_pprof.c builds it with `go build`, offline).
//
// usage: heapmutex HEAP.pb.gz MUTEX.pb.gz
//
// Every allocation and every contention is recorded (MemProfileRate 1,
// mutex fraction 1), so both profiles hold exact values: allocSmall()
// makes 20000 blocks of 64 bytes and keeps a quarter, allocBig() 8 blocks
// of 1 MiB and keeps half; lockShort() and lockLong() contend for one
// mutex from 4 goroutines each, lockLong() holding it much longer.
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

var keep [][]byte
var sink int

//go:noinline
func allocSmall(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 64)
		sink += len(b)
		if i%4 == 0 {
			keep = append(keep, b)
		}
	}
}

//go:noinline
func allocBig(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 1<<20)
		sink += len(b)
		if i%2 == 0 {
			keep = append(keep, b)
		}
	}
}

var mu sync.Mutex
var counter int

//go:noinline
func lockShort(n int) {
	for i := 0; i < n; i++ {
		mu.Lock()
		counter++
		mu.Unlock()
	}
}

//go:noinline
func lockLong(n int) {
	for i := 0; i < n; i++ {
		mu.Lock()
		for k := 0; k < 20000; k++ {
			counter += k
		}
		mu.Unlock()
	}
}

func write(name, path string) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.Lookup(name).WriteTo(f, 0)
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		os.Stderr.WriteString("heapmutex: " + err.Error() + "\n")
		os.Exit(1)
	}
}

func main() {
	if len(os.Args) != 3 {
		os.Stderr.WriteString("usage: heapmutex HEAP.pb.gz MUTEX.pb.gz\n")
		os.Exit(1)
	}
	runtime.MemProfileRate = 1
	runtime.SetMutexProfileFraction(1)
	allocSmall(20000)
	allocBig(8)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func() { defer wg.Done(); lockShort(20000) }()
		go func() { defer wg.Done(); lockLong(200) }()
	}
	wg.Wait()
	runtime.GC() // the heap profile is as of the last collection
	write("heap", os.Args[1])
	write("mutex", os.Args[2])
	runtime.KeepAlive(keep)
}
