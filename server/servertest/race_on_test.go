//go:build race

package servertest_test

const raceEnabled = true
