//go:build !race

package history

// underRace makes the slow loops of the tests shorter under -race.
const underRace = false
