package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
)

// Bounds of synthetic media.
const (
	MaxSide        = 16384 // pixels a side of a synthetic image
	MaxSeconds     = 3600  // seconds of synthetic audio
	MinSampleRate  = 8000
	MaxSampleRate  = 192000
	DefaultQuality = 85 // JPEG quality when a spec leaves it out
	DefaultRate    = 16000
)

// ImageSpec describes a synthetic image.
type ImageSpec struct {
	Width, Height int
	Format        string // png or jpeg ("": jpeg)
	Quality       int    // JPEG quality 1..100 (0: DefaultQuality)
}

// Check reports a spec no image can be made of, naming the field.
func (s ImageSpec) Check() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"width", s.Width}, {"height", s.Height}} {
		if f.v < 1 || f.v > MaxSide {
			return fmt.Errorf("%s = %d: a synthetic image has 1 to %d pixels a side", f.name, f.v, MaxSide)
		}
	}
	switch s.Format {
	case "", "png", "jpeg":
	default:
		return fmt.Errorf("format = %q: a synthetic image is \"png\" or \"jpeg\"", s.Format)
	}
	if s.Quality < 0 || s.Quality > 100 {
		return fmt.Errorf("quality = %d: JPEG quality is 1 to 100", s.Quality)
	}
	return nil
}

func (s ImageSpec) normal() ImageSpec {
	if s.Format == "" {
		s.Format = "jpeg"
	}
	if s.Quality == 0 {
		s.Quality = DefaultQuality
	}
	return s
}

// String names the spec: "1024x1024 jpeg q85".
func (s ImageSpec) String() string {
	s = s.normal()
	if s.Format == "jpeg" {
		return fmt.Sprintf("%dx%d jpeg q%d", s.Width, s.Height, s.Quality)
	}
	return fmt.Sprintf("%dx%d %s", s.Width, s.Height, s.Format)
}

// SynthImage makes the image of spec from seed and variant: smooth
// coloured value noise (shapes a codec can predict) under fine per-pixel
// noise (detail it cannot), so that it compresses as a photograph does,
// neither to nothing like a flat colour nor not at all like pure noise.
// The same spec, seed and variant make the same bytes.
func SynthImage(spec ImageSpec, seed uint64, variant int) (*Item, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	spec = spec.normal()
	rng := rand.New(rand.NewPCG(seed, uint64(variant)^0x9e3779b97f4a7c15))
	const cell = 16
	gw, gh := spec.Width/cell+2, spec.Height/cell+2
	grid := make([][3]float64, gw*gh)
	for i := range grid {
		grid[i] = [3]float64{rng.Float64() * 255, rng.Float64() * 255, rng.Float64() * 255}
	}
	img := image.NewRGBA(image.Rect(0, 0, spec.Width, spec.Height))
	for y := 0; y < spec.Height; y++ {
		gy, fy := y/cell, float64(y%cell)/cell
		for x := 0; x < spec.Width; x++ {
			gx, fx := x/cell, float64(x%cell)/cell
			a, b := grid[gy*gw+gx], grid[gy*gw+gx+1]
			c, d := grid[(gy+1)*gw+gx], grid[(gy+1)*gw+gx+1]
			n := rng.Uint32()
			var px [3]uint8
			for k := 0; k < 3; k++ {
				v := (a[k]*(1-fx)+b[k]*fx)*(1-fy) + (c[k]*(1-fx)+d[k]*fx)*fy
				v += float64(int(n>>(8*k))&31) - 16
				px[k] = uint8(math.Max(0, math.Min(255, v)))
			}
			i := img.PixOffset(x, y)
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = px[0], px[1], px[2], 255
		}
	}
	var buf bytes.Buffer
	var err error
	if spec.Format == "png" {
		err = (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: spec.Quality})
	}
	if err != nil {
		return nil, fmt.Errorf("encoding a synthetic %s: %v", spec, err)
	}
	return New(fmt.Sprintf("synthetic %s #%d", spec, variant), buf.Bytes(), 0)
}

// AudioSpec describes synthetic audio.
type AudioSpec struct {
	Seconds    float64
	SampleRate int    // 0: DefaultRate
	Format     string // wav ("": wav)
}

// Check reports a spec no audio can be made of, naming the field.
func (s AudioSpec) Check() error {
	if !(s.Seconds > 0) || s.Seconds > MaxSeconds {
		return fmt.Errorf("seconds = %g: synthetic audio lasts more than 0 and at most %d seconds", s.Seconds, MaxSeconds)
	}
	if s.SampleRate != 0 && (s.SampleRate < MinSampleRate || s.SampleRate > MaxSampleRate) {
		return fmt.Errorf("sample_rate = %d: from %d to %d Hz", s.SampleRate, MinSampleRate, MaxSampleRate)
	}
	switch s.Format {
	case "", "wav":
	default:
		return fmt.Errorf("format = %q: synthetic audio is \"wav\" (other formats come from files)", s.Format)
	}
	return nil
}

func (s AudioSpec) normal() AudioSpec {
	if s.SampleRate == 0 {
		s.SampleRate = DefaultRate
	}
	if s.Format == "" {
		s.Format = "wav"
	}
	return s
}

// String names the spec: "3s 16000 Hz wav".
func (s AudioSpec) String() string {
	s = s.normal()
	return fmt.Sprintf("%gs %d Hz %s", s.Seconds, s.SampleRate, s.Format)
}

// SynthAudio makes the audio of spec from seed and variant: 16-bit mono
// PCM of a few drifting tones under noise, a voice's band, reproducible.
func SynthAudio(spec AudioSpec, seed uint64, variant int) (*Item, error) {
	if err := spec.Check(); err != nil {
		return nil, err
	}
	spec = spec.normal()
	rng := rand.New(rand.NewPCG(seed, uint64(variant)^0x51afd7ed558ccd))
	n := int(math.Round(spec.Seconds * float64(spec.SampleRate)))
	if n < 1 {
		n = 1
	}
	pcm := make([]byte, 44+2*n)
	writeWAVHeader(pcm, spec.SampleRate, 1, 2*n)
	freqs := [3]float64{120 + rng.Float64()*100, 400 + rng.Float64()*600, 1200 + rng.Float64()*1500}
	rate := float64(spec.SampleRate)
	for i := 0; i < n; i++ {
		t := float64(i) / rate
		env := 0.5 + 0.5*math.Sin(2*math.Pi*3*t) // syllable-like rise and fall
		v := 0.0
		for k, f := range freqs {
			v += math.Sin(2*math.Pi*f*t*(1+0.02*math.Sin(t))) / float64(k+2)
		}
		v = v*env*9000 + (rng.Float64()-0.5)*1500
		binary.LittleEndian.PutUint16(pcm[44+2*i:], uint16(int16(math.Max(-32768, math.Min(32767, v)))))
	}
	return New(fmt.Sprintf("synthetic %s #%d", spec, variant), pcm, 0)
}

// writeWAVHeader writes a canonical 44-byte PCM16 WAV header whose data
// chunk claims dataBytes.
func writeWAVHeader(b []byte, rate, channels, dataBytes int) {
	copy(b[0:], "RIFF")
	binary.LittleEndian.PutUint32(b[4:], uint32(36+dataBytes))
	copy(b[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(b[16:], 16)
	binary.LittleEndian.PutUint16(b[20:], 1) // PCM
	binary.LittleEndian.PutUint16(b[22:], uint16(channels))
	binary.LittleEndian.PutUint32(b[24:], uint32(rate))
	binary.LittleEndian.PutUint32(b[28:], uint32(rate*channels*2))
	binary.LittleEndian.PutUint16(b[32:], uint16(channels*2))
	binary.LittleEndian.PutUint16(b[34:], 16)
	copy(b[36:], "data")
	binary.LittleEndian.PutUint32(b[40:], uint32(dataBytes))
}
