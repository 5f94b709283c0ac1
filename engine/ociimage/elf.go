package ociimage

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
)

// elfTarget is what an executable for one architecture looks like.
type elfTarget struct {
	machine elf.Machine
	class   elf.Class
	order   binary.ByteOrder
}

// machines maps Go's (and the OCI's) architecture names to ELF's.
var machines = map[string]elfTarget{
	"amd64":   {elf.EM_X86_64, elf.ELFCLASS64, binary.LittleEndian},
	"arm64":   {elf.EM_AARCH64, elf.ELFCLASS64, binary.LittleEndian},
	"386":     {elf.EM_386, elf.ELFCLASS32, binary.LittleEndian},
	"arm":     {elf.EM_ARM, elf.ELFCLASS32, binary.LittleEndian},
	"ppc64le": {elf.EM_PPC64, elf.ELFCLASS64, binary.LittleEndian},
	"s390x":   {elf.EM_S390, elf.ELFCLASS64, binary.BigEndian},
	"riscv64": {elf.EM_RISCV, elf.ELFCLASS64, binary.LittleEndian},
	"loong64": {elf.EM_LOONGARCH, elf.ELFCLASS64, binary.LittleEndian},
}

func architectures() []string {
	var names []string
	for a := range machines {
		names = append(names, a)
	}
	slices.Sort(names)
	return names
}

// checkExecutable refuses what cannot run on an empty base for the
// platform's architecture: anything but an ELF executable, one for
// another machine, or one that needs a dynamic loader and a libc.
func checkExecutable(file string, data []byte, arch string) error {
	f, err := elf.NewFile(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("binary %s: not an ELF executable (%v)", file, err)
	}
	defer f.Close()
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("binary %s: an ELF %s, not an executable", file, f.Type)
	}
	want := machines[arch]
	if f.Machine != want.machine || f.Class != want.class || f.ByteOrder != want.order {
		return fmt.Errorf("binary %s: built for %s (%s), not for the image's architecture %s: build it with GOARCH=%s",
			file, f.Machine, f.Class, arch, arch)
	}
	return checkStatic(file, f)
}

// checkStatic refuses a dynamically linked executable: its interpreter
// (PT_INTERP) and its libraries (DT_NEEDED) are not in the image.
func checkStatic(file string, f *elf.File) error {
	var needs []string
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return fmt.Errorf("binary %s: reading its interpreter: %v", file, err)
		}
		needs = append(needs, strings.TrimRight(string(b), "\x00"))
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("binary %s: reading its dynamic section: %v", file, err)
	}
	needs = append(needs, libs...)
	if len(needs) > 0 {
		return fmt.Errorf("binary %s is dynamically linked (needs %s), and the image has no libc: build it with CGO_ENABLED=0 (Go) or link it with -static (C)",
			file, strings.Join(needs, ", "))
	}
	return nil
}
