package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// labels mark every object and pod of a run: the tool, the run, and the
// part it plays.
func labels(s Spec, component string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":      "llmload",
		"app.kubernetes.io/instance":  s.Name,
		"app.kubernetes.io/component": component,
	}
}

func objectMeta(s Spec, name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: s.Namespace, Labels: labels(s, component)}
}

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

// claim holds the results. ReadWriteMany, since every segment pod writes
// its file from whichever node it runs on, and the merge pod reads them.
func claim(s Spec, name string) *corev1.PersistentVolumeClaim {
	size := s.StorageSize
	if size.IsZero() {
		size = ResultsSize(s.Load, s.Segments)
	}
	pvc := &corev1.PersistentVolumeClaim{TypeMeta: typeMeta("v1", "PersistentVolumeClaim"), ObjectMeta: objectMeta(s, name, "results")}
	pvc.Spec = corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
	}
	if s.StorageClass != "" {
		pvc.Spec.StorageClassName = ptr(s.StorageClass)
	}
	return pvc
}

func resultsVolume(claim string) corev1.Volume {
	return corev1.Volume{Name: "results", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
	}}
}

func ptr[T any](v T) *T { return &v }
