package kube

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxConfigMapBytes is what one ConfigMap may hold: the API server
// refuses more than 1 MiB of data (corev1.MaxSecretSize applies to both).
const MaxConfigMapBytes = corev1.MaxSecretSize

// shipped is a file in the ConfigMap: its key there and its path below
// ScenarioDir.
type shipped struct {
	key  string
	path string
	data []byte
}

// configMap holds the scenario and its data files. A ConfigMap key may not
// contain '/', so each file has a flat key and the volume's items put it
// back at its path: data/medium.jsonl lands at /scenario/data/medium.jsonl.
// It returns the volume's items too, the scenario's first.
func configMap(s Spec) (*corev1.ConfigMap, []corev1.KeyToPath, error) {
	files, err := shippedFiles(s)
	if err != nil {
		return nil, nil, err
	}
	if err := checkSize(files); err != nil {
		return nil, nil, err
	}
	cm := &corev1.ConfigMap{TypeMeta: typeMeta("v1", "ConfigMap"), ObjectMeta: objectMeta(s, s.Name+"-scenario", "scenario")}
	items := make([]corev1.KeyToPath, len(files))
	for i, f := range files {
		items[i] = corev1.KeyToPath{Key: f.key, Path: f.path}
		// Text goes in data, readable with kubectl; anything else (a
		// gzipped pool) in binaryData, which the API carries as base64.
		if utf8.Valid(f.data) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[f.key] = string(f.data)
		} else {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[f.key] = f.data
		}
	}
	return cm, items, nil
}

// shippedFiles gives the scenario and each data file a key, refusing a
// data file that would not land beside the scenario in the pod.
func shippedFiles(s Spec) ([]shipped, error) {
	name := path.Base(strings.ReplaceAll(s.Script.Path, `\`, "/"))
	files := []shipped{{path: name, data: s.Script.Data}}
	seen := map[string]bool{name: true}
	for _, f := range s.Data {
		if err := checkDataPath(f.Path); err != nil {
			return nil, err
		}
		p := path.Clean(f.Path)
		if seen[p] {
			return nil, fmt.Errorf("data file %s is listed twice, or is the scenario itself", f.Path)
		}
		seen[p] = true
		files = append(files, shipped{path: p, data: f.Data})
	}
	used := map[string]bool{}
	for i := range files {
		key, err := uniqueKey(files[i].path, used)
		if err != nil {
			return nil, err
		}
		files[i].key = key
	}
	return files, nil
}

// checkDataPath refuses a data file the pod could not find where the
// scenario looks for it: only a path relative to the scenario's
// directory, inside it, is found again below ScenarioDir.
func checkDataPath(p string) error {
	clean := path.Clean(p)
	if path.IsAbs(clean) || strings.HasPrefix(p, `\`) || (len(p) > 1 && p[1] == ':') ||
		clean == ".." || strings.HasPrefix(clean, "../") {
		return fmt.Errorf("data file %s is outside the scenario's directory, or named by an absolute path: "+
			"the pods see only the scenario's directory (at %s); copy the file beside the scenario and load it by a relative path", p, ScenarioDir)
	}
	return nil
}

// uniqueKey turns a path into a ConfigMap key ('/' and anything else a
// key may not hold become '_'), numbered when two paths meet in one key.
func uniqueKey(p string, used map[string]bool) (string, error) {
	base := strings.Map(func(r rune) rune {
		if r == '-' || r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, p)
	key := base
	for n := 2; used[key]; n++ {
		key = fmt.Sprintf("%s-%d", base, n)
	}
	if msgs := validation.IsConfigMapKey(key); len(msgs) > 0 {
		return "", fmt.Errorf("data file %s: no ConfigMap key can hold it (%s)", p, msgs[0])
	}
	used[key] = true
	return key, nil
}

// checkSize refuses files that would overflow one ConfigMap, naming the
// biggest, which are the ones to trim.
func checkSize(files []shipped) error {
	total := 0
	for _, f := range files {
		total += len(f.key) + len(f.data)
	}
	if total <= MaxConfigMapBytes {
		return nil
	}
	bySize := slices.Clone(files)
	slices.SortStableFunc(bySize, func(a, b shipped) int { return cmp.Compare(len(b.data), len(a.data)) })
	var names []string
	for _, f := range bySize[:min(3, len(bySize))] {
		names = append(names, fmt.Sprintf("%s (%s)", f.path, sizeString(int64(len(f.data)))))
	}
	return fmt.Errorf("the scenario and its data files come to %s, over the %s one ConfigMap may hold; the biggest: %s. "+
		"Ship a sample of the data (a few thousand prompts measure as well as a million), gzip it, or build an image with the data in it",
		sizeString(int64(total)), sizeString(MaxConfigMapBytes), strings.Join(names, ", "))
}

// sizeString prints a byte count in KiB or MiB, as Kubernetes counts.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// scenarioVolume mounts the ConfigMap's files at their paths.
func scenarioVolume(cm *corev1.ConfigMap, items []corev1.KeyToPath) corev1.Volume {
	return corev1.Volume{Name: "scenario", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Items: items, DefaultMode: ptr(int32(0o444)),
	}}}
}
