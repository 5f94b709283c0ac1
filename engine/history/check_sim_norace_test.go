//go:build !race

package history_test

const simRace = false
