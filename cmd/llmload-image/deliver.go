package main

import (
	"context"
	"fmt"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/llmload/llmload/engine/ociimage"
)

// deliver writes the tarball and pushes, as the flags ask, with a line
// on stdout for each: the name, the manifest's digest, the size.
func deliver(ctx context.Context, f *flags, img v1.Image, stdout io.Writer) error {
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := ociimage.Size(img)
	if err != nil {
		return err
	}
	if f.out != "" {
		if err := ociimage.WriteTarballFile(f.out, img, f.name); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s (%s) written to %s\n", f.name, digest, sizeText(size), f.out)
	}
	if f.push != "" {
		if err := ociimage.Push(ctx, img, f.push); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s %s (%s) pushed\n", f.push, digest, sizeText(size))
	}
	return nil
}
