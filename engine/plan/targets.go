package plan

import (
	"fmt"
	"slices"
	"strings"
)

// TargetNames lists the names of targets, in their order.
func TargetNames(targets []Target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.Name
	}
	return out
}

// CheckTargetName reports a name that is not among names (the targets'),
// listing those it could have been.
func CheckTargetName(names []string, name string) error {
	if len(names) == 0 {
		return fmt.Errorf("%q: the scenario has one target; name targets in options.targets to choose among them", name)
	}
	if slices.Contains(names, name) {
		return nil
	}
	return fmt.Errorf("no target named %q (targets: %s)", name, strings.Join(names, ", "))
}
