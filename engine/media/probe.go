package media

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for DecodeConfig
	_ "image/jpeg" // registers JPEG for DecodeConfig
	_ "image/png"  // registers PNG for DecodeConfig
	"math"

	_ "golang.org/x/image/webp" // registers WebP for DecodeConfig
)

// mimes maps a format to its MIME type.
var mimes = map[string]string{
	"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
	"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac", "ogg": "audio/ogg",
	"mp4": "video/mp4", "webm": "video/webm",
}

// kinds maps a format to its kind.
var kinds = map[string]string{
	"png": Image, "jpeg": Image, "gif": Image, "webp": Image,
	"wav": Audio, "mp3": Audio, "flac": Audio, "ogg": Audio,
	"mp4": Video, "webm": Video,
}

// MIME returns the MIME type of a format ("" for an unknown one).
func MIME(format string) string { return mimes[format] }

// KindOf returns the kind of a format ("" for an unknown one).
func KindOf(format string) string { return kinds[format] }

// Sniff names the format of data from its first bytes, "" when it is none
// this package knows.
func Sniff(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(data, []byte{0xFF, 0xD8, 0xFF}):
		return "jpeg"
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "gif"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "webp"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(data, []byte("ID3")), len(data) >= 2 && data[0] == 0xFF && data[1]&0xE0 == 0xE0:
		return "mp3"
	case bytes.HasPrefix(data, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(data, []byte("OggS")):
		return "ogg"
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		return "mp4"
	case bytes.HasPrefix(data, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return "webm"
	}
	return ""
}

// ErrUnknownFormat says data is no image, audio or video format this
// package knows.
var ErrUnknownFormat = errors.New("not an image, audio or video file llmload knows (png, jpeg, gif, webp; wav, mp3, flac, ogg; mp4, webm)")

// Probe sniffs data's format and reads its header: an image's width and
// height, an audio file's duration, sample rate and channels. A header
// that cannot be read, or that describes more data than there is, is an
// error saying why.
func Probe(data []byte) (Info, error) {
	format := Sniff(data)
	if format == "" {
		return Info{}, ErrUnknownFormat
	}
	info := Info{Kind: kinds[format], Format: format, MIME: mimes[format]}
	var err error
	switch info.Kind {
	case Image:
		var cfg image.Config
		cfg, _, err = image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return info, fmt.Errorf("unreadable %s header: %v", format, err)
		}
		if cfg.Width <= 0 || cfg.Height <= 0 {
			return info, fmt.Errorf("a %s of %d×%d pixels: an image has at least one pixel a side", format, cfg.Width, cfg.Height)
		}
		info.Width, info.Height = cfg.Width, cfg.Height
	case Audio:
		switch format {
		case "wav":
			err = probeWAV(data, &info)
		case "mp3":
			err = probeMP3(data, &info)
		case "flac":
			err = probeFLAC(data, &info)
		case "ogg":
			err = probeOgg(data, &info)
		}
		if err != nil {
			return info, fmt.Errorf("unreadable %s header: %v", format, err)
		}
	case Video:
		if format == "mp4" {
			if err := probeMP4(data, &info); err != nil {
				return info, fmt.Errorf("unreadable mp4 header: %v", err)
			}
		}
	}
	return info, nil
}

// CheckWhole reports an image whose bytes stop short of its format's end
// marker: a truncated file that a header alone would pass.
func CheckWhole(format string, data []byte) error {
	switch format {
	case "jpeg":
		end := bytes.TrimRight(data, "\x00")
		if !bytes.HasSuffix(end, []byte{0xFF, 0xD9}) {
			return errors.New("truncated jpeg: no end-of-image marker")
		}
	case "png":
		if len(data) < 12 || !bytes.Equal(data[len(data)-8:len(data)-4], []byte("IEND")) {
			return errors.New("truncated png: no IEND chunk at its end")
		}
	case "gif":
		if data[len(data)-1] != 0x3B {
			return errors.New("truncated gif: no trailer")
		}
	}
	return nil
}

// probeWAV reads a RIFF WAVE file's fmt and data chunks.
func probeWAV(data []byte, info *Info) error {
	var rate, channels, blockAlign int
	haveFmt := false
	for p := 12; p+8 <= len(data); {
		id, size := string(data[p:p+4]), int64(binary.LittleEndian.Uint32(data[p+4:p+8]))
		body := p + 8
		switch id {
		case "fmt ":
			if size < 16 || int64(body)+16 > int64(len(data)) {
				return errors.New("fmt chunk shorter than 16 bytes")
			}
			channels = int(binary.LittleEndian.Uint16(data[body+2:]))
			rate = int(binary.LittleEndian.Uint32(data[body+4:]))
			blockAlign = int(binary.LittleEndian.Uint16(data[body+12:]))
			if channels == 0 || rate == 0 || blockAlign == 0 {
				return fmt.Errorf("fmt chunk says %d channels at %d Hz, %d bytes a frame", channels, rate, blockAlign)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return errors.New("data chunk before any fmt chunk")
			}
			if have := int64(len(data) - body); size > have {
				return fmt.Errorf("the data chunk says %d bytes but the file holds %d after its header", size, have)
			}
			info.SampleRate, info.Channels = rate, channels
			info.Seconds = float64(size) / float64(blockAlign) / float64(rate)
			return nil
		}
		next := int64(body) + size + size&1
		if next > int64(len(data)) {
			break
		}
		p = int(next)
	}
	if !haveFmt {
		return errors.New("no fmt chunk")
	}
	return errors.New("no data chunk")
}

// mp3 bitrates (kbit/s) by version group and layer, and sample rates.
var (
	mp3Bitrates = [2][3][16]int{
		{ // MPEG-1: layers I, II, III
			{0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448},
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384},
			{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320},
		},
		{ // MPEG-2 and 2.5
			{0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
			{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160},
		},
	}
	mp3Rates = [4][3]int{{11025, 12000, 8000}, {}, {22050, 24000, 16000}, {44100, 48000, 32000}}
)

// probeMP3 walks an MP3's frames (after any ID3v2 tag), summing their
// durations.
func probeMP3(data []byte, info *Info) error {
	p := 0
	if bytes.HasPrefix(data, []byte("ID3")) && len(data) >= 10 {
		size := int(data[6]&0x7F)<<21 | int(data[7]&0x7F)<<14 | int(data[8]&0x7F)<<7 | int(data[9]&0x7F)
		p = 10 + size
	}
	frames, samples := 0, 0.0
	for p+4 <= len(data) {
		h := data[p : p+4]
		if h[0] != 0xFF || h[1]&0xE0 != 0xE0 {
			if frames == 0 {
				return errors.New("no MPEG audio frame after the tag")
			}
			break // trailing tags (ID3v1, APE)
		}
		version := int(h[1]>>3) & 3 // 0: 2.5, 2: 2, 3: 1
		layer := 4 - int(h[1]>>1)&3 // 1..3
		bi, ri := int(h[2]>>4), int(h[2]>>2)&3
		pad := int(h[2]>>1) & 1
		if version == 1 || layer == 4 || bi == 0 || bi == 15 || ri == 3 {
			if frames == 0 {
				return errors.New("invalid MPEG audio frame header")
			}
			break
		}
		group := 0
		if version != 3 {
			group = 1
		}
		rate := mp3Rates[version][ri]
		bitrate := mp3Bitrates[group][layer-1][bi] * 1000
		var size, perFrame int
		switch {
		case layer == 1:
			size, perFrame = (12*bitrate/rate+pad)*4, 384
		case layer == 3 && group == 1:
			size, perFrame = 72*bitrate/rate+pad, 576
		default:
			size, perFrame = 144*bitrate/rate+pad, 1152
		}
		if frames == 0 {
			info.SampleRate = rate
			info.Channels = 2
			if h[3]>>6 == 3 {
				info.Channels = 1
			}
		}
		frames++
		samples += float64(perFrame)
		p += size
	}
	info.Seconds = samples / float64(info.SampleRate)
	return nil
}

// probeFLAC reads FLAC's STREAMINFO block.
func probeFLAC(data []byte, info *Info) error {
	if len(data) < 8+34 || data[4]&0x7F != 0 {
		return errors.New("no STREAMINFO block")
	}
	si := data[8:]
	rate := int(si[10])<<12 | int(si[11])<<4 | int(si[12])>>4
	channels := int(si[12]>>1)&7 + 1
	total := uint64(si[13]&0x0F)<<32 | uint64(binary.BigEndian.Uint32(si[14:18]))
	if rate == 0 {
		return errors.New("STREAMINFO says 0 Hz")
	}
	info.SampleRate, info.Channels = rate, channels
	info.Seconds = float64(total) / float64(rate)
	return nil
}

// probeOgg reads an Ogg Opus or Vorbis stream's identification header and
// its last page's granule position.
func probeOgg(data []byte, info *Info) error {
	if len(data) < 27 {
		return errors.New("shorter than one Ogg page")
	}
	segs := int(data[26])
	body := 27 + segs
	if body > len(data) {
		return errors.New("first Ogg page cut short")
	}
	id := data[body:]
	var rate, skip int
	switch {
	case bytes.HasPrefix(id, []byte("OpusHead")) && len(id) >= 19:
		info.Channels = int(id[9])
		skip = int(binary.LittleEndian.Uint16(id[10:12]))
		rate = 48000 // Opus granules count 48 kHz samples whatever the input rate
		info.SampleRate = int(binary.LittleEndian.Uint32(id[12:16]))
		if info.SampleRate == 0 {
			info.SampleRate = rate
		}
	case bytes.HasPrefix(id, []byte("\x01vorbis")) && len(id) >= 16:
		info.Channels = int(id[11])
		rate = int(binary.LittleEndian.Uint32(id[12:16]))
		info.SampleRate = rate
	default:
		return errors.New("neither an Opus nor a Vorbis stream")
	}
	if rate == 0 {
		return errors.New("identification header says 0 Hz")
	}
	last := bytes.LastIndex(data, []byte("OggS"))
	if last < 0 || last+14 > len(data) {
		return errors.New("no last Ogg page")
	}
	granule := binary.LittleEndian.Uint64(data[last+6 : last+14])
	if granule == math.MaxUint64 {
		granule = 0
	}
	info.Seconds = math.Max(0, float64(int64(granule)-int64(skip))/float64(rate))
	return nil
}

// probeMP4 finds the movie header (moov/mvhd) and reads the duration.
func probeMP4(data []byte, info *Info) error {
	moov, ok := mp4Box(data, "moov")
	if !ok {
		// A file whose moov comes after its mdat, cut short, or a
		// fragmented one: playable, but its duration is not in a header.
		return nil
	}
	mvhd, ok := mp4Box(moov, "mvhd")
	if !ok || len(mvhd) < 20 {
		return errors.New("moov without an mvhd box")
	}
	var scale, dur uint64
	if mvhd[0] == 1 {
		if len(mvhd) < 32 {
			return errors.New("mvhd cut short")
		}
		scale, dur = uint64(binary.BigEndian.Uint32(mvhd[20:24])), binary.BigEndian.Uint64(mvhd[24:32])
	} else {
		scale, dur = uint64(binary.BigEndian.Uint32(mvhd[12:16])), uint64(binary.BigEndian.Uint32(mvhd[16:20]))
	}
	if scale > 0 {
		info.Seconds = float64(dur) / float64(scale)
	}
	return nil
}

// mp4Box returns the body of the first top-level box of type name in data.
func mp4Box(data []byte, name string) ([]byte, bool) {
	for p := 0; p+8 <= len(data); {
		size := uint64(binary.BigEndian.Uint32(data[p : p+4]))
		hdr := uint64(8)
		switch size {
		case 1:
			if p+16 > len(data) {
				return nil, false
			}
			size, hdr = binary.BigEndian.Uint64(data[p+8:p+16]), 16
		case 0:
			size = uint64(len(data) - p)
		}
		if size < hdr || uint64(p)+size > uint64(len(data)) {
			return nil, false
		}
		if string(data[p+4:p+8]) == name {
			return data[uint64(p)+hdr : uint64(p)+size], true
		}
		p += int(size)
	}
	return nil, false
}
