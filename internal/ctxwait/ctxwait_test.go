package ctxwait

import (
	"context"
	"errors"
	"sync"
	"testing"
)

func TestWaitReturnsWhenTheWorkEnds(t *testing.T) {
	var wg sync.WaitGroup
	wg.Add(1)
	ended := false
	go func() {
		ended = true
		wg.Done()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := Wait(ctx, wg.Wait); err != nil || !ended {
		t.Fatalf("err %v, ended %v", err, ended)
	}
	// Without a context that can end, the work is waited for all the same.
	started, release := make(chan struct{}), make(chan struct{})
	go func() {
		<-started
		close(release)
	}()
	ended = false
	if err := Wait(context.Background(), func() { close(started); <-release; ended = true }); err != nil || !ended {
		t.Fatalf("err %v, ended %v", err, ended)
	}
}

func TestWaitReturnsWhenTheContextEnds(t *testing.T) {
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Wait(ctx, func() { <-release }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	close(release)
}
