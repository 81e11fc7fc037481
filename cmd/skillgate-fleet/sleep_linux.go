package main

import (
	"syscall"
	"time"
)

// preciseSleep sleeps for d in the kernel (nanosleep, high-resolution
// timers) instead of on the Go runtime's timers: an idle Go process wakes
// for a timer under a millisecond away only after about a millisecond
// (its poller waits in whole milliseconds), which at 2,000 requests a
// second would put most of a millisecond of the load generator's own lag
// into every latency measured from the schedule. The goroutine's thread
// blocks meanwhile; it uses no CPU.
func preciseSleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var left syscall.Timespec
		if err := syscall.Nanosleep(&ts, &left); err != syscall.EINTR {
			return
		}
		ts = left // a signal woke the thread: sleep the rest
	}
}
