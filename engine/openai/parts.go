package openai

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/llmload/llmload/engine"
	"github.com/llmload/llmload/engine/media"
)

// A request's media travel as base64 text of megabytes. JSON-encoding
// that text per request would cost the client more than everything else
// it does (the encoder inspects every byte), and copying it into each
// body would make memory grow with the VUs. So a dialect marshals a
// placeholder string where each media item's text goes, and the body is
// sent as segments: the JSON around the placeholders, and the item's
// base64 text, encoded once per process and shared by every request.
// Base64 and a data URL's prefix need no JSON escaping, so the spliced
// body is the JSON the placeholder-free encoding would have produced.

// nonce makes the placeholders of this process unguessable, so no text a
// scenario sends can be taken for one.
var nonce = func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// placeholderMark is how a placeholder begins in marshalled JSON: the
// unit separator the encoder escapes as \u001f, then the nonce.
var placeholderMark = []byte(`"\u001fllmload-media-` + nonce + `:`)

// placeholder is the string a dialect puts where the i-th media item of a
// request (in the order of mediaItems) goes: as a data URL, or as bare
// base64 text.
func placeholder(i int, dataURL bool) string {
	kind := "b"
	if dataURL {
		kind = "u"
	}
	return "\x1fllmload-media-" + nonce + ":" + strconv.Itoa(i) + ":" + kind + "\x1f"
}

// mediaItems lists the inline media of req's messages in the order the
// dialects number them: message by message, part by part.
func mediaItems(req *engine.ChatRequest) []*media.Item {
	var items []*media.Item
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			if p := &req.Messages[i].Parts[j]; p.Type != engine.PartText && p.Media != nil {
				items = append(items, p.Media)
			}
		}
	}
	return items
}

// payload is a request body as segments, sent without being joined.
type payload struct {
	segs  [][]byte
	n     int64
	ctype string // the body's Content-Type when not JSON
}

// single is the payload of one contiguous body.
func single(b []byte) payload { return payload{segs: [][]byte{b}, n: int64(len(b))} }

// reader returns a reader of the whole body; each call a fresh one, for
// the transport's resend of a request.
func (p *payload) reader() io.ReadCloser {
	return &segReader{segs: slices.Clone(p.segs)}
}

// joined returns the body as one slice (a copy when it has several
// segments): for tests and the rare reader that needs it whole.
func (p *payload) joined() []byte {
	if len(p.segs) == 1 {
		return p.segs[0]
	}
	return bytes.Join(p.segs, nil)
}

// segReader reads segments in turn. WriteTo hands each to the writer
// whole, so the transport writes a shared item straight from its bytes.
type segReader struct{ segs [][]byte }

func (r *segReader) Read(p []byte) (int, error) {
	for len(r.segs) > 0 && len(r.segs[0]) == 0 {
		r.segs = r.segs[1:]
	}
	if len(r.segs) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.segs[0])
	r.segs[0] = r.segs[0][n:]
	return n, nil
}

func (r *segReader) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(r.segs) > 0 {
		n, err := w.Write(r.segs[0])
		total += int64(n)
		r.segs[0] = r.segs[0][n:]
		if err != nil {
			return total, err
		}
		r.segs = r.segs[1:]
	}
	return total, nil
}

func (r *segReader) Close() error { return nil }

// dataURLPrefixes holds `"data:<mime>;base64,` by MIME type, shared.
var dataURLPrefixes sync.Map

func quotedPrefix(it *media.Item) []byte {
	if v, ok := dataURLPrefixes.Load(it.MIME); ok {
		return v.([]byte)
	}
	v, _ := dataURLPrefixes.LoadOrStore(it.MIME, []byte(`"`+it.DataURLPrefix()))
	return v.([]byte)
}

var quote = []byte{'"'}

// splice replaces body's placeholders with the items' text, as segments.
func splice(body []byte, items []*media.Item) (payload, error) {
	p := payload{segs: make([][]byte, 0, 1+3*len(items)), n: int64(len(body))}
	rest := body
	for {
		at := bytes.Index(rest, placeholderMark)
		if at < 0 {
			break
		}
		tail := rest[at+len(placeholderMark):]
		end := bytes.Index(tail, []byte(`\u001f"`))
		if end < 0 {
			return payload{}, fmt.Errorf("encoding request: a media placeholder without its end")
		}
		ref := tail[:end] // "<i>:<u|b>"
		colon := bytes.IndexByte(ref, ':')
		i, err := strconv.Atoi(string(ref[:max(colon, 0)]))
		if colon < 0 || err != nil || i < 0 || i >= len(items) {
			return payload{}, fmt.Errorf("encoding request: media placeholder %q names no item", ref)
		}
		it := items[i]
		b64 := it.Base64()
		open := quote
		if string(ref[colon+1:]) == "u" {
			open = quotedPrefix(it)
		}
		p.segs = append(p.segs, rest[:at], open, b64, quote)
		cut := at + len(placeholderMark) + end + len(`\u001f"`)
		p.n += int64(len(open)+len(b64)+1) - int64(cut-at)
		rest = rest[cut:]
	}
	p.segs = append(p.segs, rest)
	return p, nil
}

// countMedia records what media req sends in res.
func countMedia(req *engine.ChatRequest, res *engine.Result) {
	if req.Audio != nil {
		res.Audios++
		res.AudioIn += req.Audio.Seconds
	}
	for i := range req.Messages {
		for j := range req.Messages[i].Parts {
			p := &req.Messages[i].Parts[j]
			switch p.Type {
			case engine.PartImage:
				res.Images++
			case engine.PartVideo:
				res.Videos++
			case engine.PartAudio:
				res.Audios++
				if p.Media != nil {
					res.AudioIn += p.Media.Seconds
				}
			}
		}
	}
}

// partsError says which part of which message a dialect cannot send.
func partsError(api string, msg, part int, p *engine.Part) error {
	return fmt.Errorf("messages[%d].content[%d]: the %s takes no %s parts", msg, part, api, p.Type)
}

// mediaRef is how a part's media goes on the wire: the placeholder of
// its inline item (counted by *n), or its URL.
func mediaRef(p *engine.Part, n *int, dataURL bool) string {
	if p.Media == nil {
		return p.URL
	}
	s := placeholder(*n, dataURL)
	*n++
	return s
}

// chatMessage is a chat message whose content is a list of parts.
type chatMessage struct {
	Role       string            `json:"role"`
	Content    any               `json:"content"`
	ToolCalls  []engine.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
}

// chatPart is one content part in chat completions' wire form.
type chatPart struct {
	Type       string    `json:"type"`
	Text       *string   `json:"text,omitempty"`
	ImageURL   *urlRef   `json:"image_url,omitempty"`
	InputAudio *audioRef `json:"input_audio,omitempty"`
	AudioURL   *urlRef   `json:"audio_url,omitempty"`
	VideoURL   *urlRef   `json:"video_url,omitempty"`
}

type urlRef struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

type audioRef struct {
	Data   string `json:"data"`
	Format string `json:"format"`
}

// chatMessages turns msgs into chat completions' wire form: a message
// with parts sends them as a list (OpenAI's image_url and input_audio,
// vLLM's audio_url and video_url), any other its string content.
func chatMessages(msgs []engine.Message) ([]chatMessage, error) {
	out := make([]chatMessage, len(msgs))
	n := 0
	for i := range msgs {
		m := &msgs[i]
		out[i] = chatMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		if len(m.Parts) == 0 {
			continue
		}
		parts := make([]chatPart, len(m.Parts))
		for j := range m.Parts {
			p := &m.Parts[j]
			switch p.Type {
			case engine.PartText:
				parts[j] = chatPart{Type: "text", Text: &p.Text}
			case engine.PartImage:
				parts[j] = chatPart{Type: "image_url", ImageURL: &urlRef{URL: mediaRef(p, &n, true), Detail: p.Detail}}
			case engine.PartAudio:
				if p.Media == nil {
					parts[j] = chatPart{Type: "audio_url", AudioURL: &urlRef{URL: p.URL}}
					break
				}
				parts[j] = chatPart{Type: "input_audio", InputAudio: &audioRef{Data: mediaRef(p, &n, false), Format: p.Media.Format}}
			case engine.PartVideo:
				parts[j] = chatPart{Type: "video_url", VideoURL: &urlRef{URL: mediaRef(p, &n, true)}}
			default:
				return nil, fmt.Errorf("messages[%d].content[%d]: unknown part type %q", i, j, p.Type)
			}
		}
		out[i].Content = parts
	}
	return out, nil
}

// hasParts reports whether any message of msgs has a content list.
func hasParts(msgs []engine.Message) bool {
	for i := range msgs {
		if len(msgs[i].Parts) > 0 {
			return true
		}
	}
	return false
}

// partsText joins a message's text parts, for the offline count of its
// tokens; a message without parts is its content.
func partsText(m *engine.Message) string {
	if len(m.Parts) == 0 {
		return m.Content
	}
	var b bytes.Buffer
	for j := range m.Parts {
		if m.Parts[j].Type == engine.PartText {
			b.WriteString(m.Parts[j].Text)
		}
	}
	return b.String()
}
