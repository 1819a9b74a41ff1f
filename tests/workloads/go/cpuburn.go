// cpuburn.go - a Go program that writes a pprof CPU profile of itself with
// runtime/pprof, the way Go programs are profiled: real pprof files from
// the tool the format comes from, for ptprof's pprof reader tests
// (tests/unit/test_pprof.c builds it with `go build`, offline).
//
// usage: cpuburn OUT.pb.gz SECONDS
//
// Two goroutines spin for SECONDS of CPU time each: one in heavy() (three
// quarters of its work) and light() (one quarter), both reaching the
// arithmetic through mix(), small enough for the compiler to inline, so the
// profile has inline frames; the other in spinner().
package main

import (
	"os"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

var sink uint64

func mix(x uint64) uint64 {
	x ^= x >> 29
	x *= 0xbf58476d1ce4e5b9
	return x
}

//go:noinline
func heavy(x uint64) uint64 {
	for i := 0; i < 3000; i++ {
		x = mix(x)
	}
	return x
}

//go:noinline
func light(x uint64) uint64 {
	for i := 0; i < 1000; i++ {
		x = mix(x)
	}
	return x
}

//go:noinline
func spinner(x uint64) uint64 {
	for i := 0; i < 2000; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

func main() {
	if len(os.Args) != 3 {
		os.Stderr.WriteString("usage: cpuburn OUT.pb.gz SECONDS\n")
		os.Exit(1)
	}
	seconds, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil {
		os.Stderr.WriteString("cpuburn: bad SECONDS\n")
		os.Exit(1)
	}
	out, err := os.Create(os.Args[1])
	if err != nil {
		os.Stderr.WriteString("cpuburn: " + err.Error() + "\n")
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		os.Stderr.WriteString("cpuburn: " + err.Error() + "\n")
		os.Exit(1)
	}
	deadline := time.Now().Add(time.Duration(seconds * float64(time.Second)))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		x := uint64(1)
		for time.Now().Before(deadline) {
			x = heavy(x)
			x = light(x)
		}
		sink += x
	}()
	go func() {
		defer wg.Done()
		x := uint64(2)
		for time.Now().Before(deadline) {
			x = spinner(x)
		}
		sink += x
	}()
	wg.Wait()
	pprof.StopCPUProfile()
	out.Close()
}
