//go:build !linux

package main

import "time"

// preciseSleep sleeps for d; outside Linux on the Go runtime's timers.
func preciseSleep(d time.Duration) { time.Sleep(d) }
