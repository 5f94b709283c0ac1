package sim

import "encoding/json"

// extensions are the vLLM sampling extensions go-openai's request types
// lack, decoded from the same body in a second pass.
type extensions struct {
	// IgnoreEOS makes the answer run to max_tokens: no early stop.
	IgnoreEOS *bool `json:"ignore_eos"`
	// MinTokens is the shortest answer allowed to stop early.
	MinTokens *int `json:"min_tokens"`
	// raw marks a completions prompt, which a server tokenizes as it is:
	// no chat template around it.
	raw bool
	// media is what the request's media parts add; nil without any.
	media *mediaCount
}

// parseExtensions decodes the extensions of a body that already decoded as
// a request, so only a mistyped field can fail here.
func parseExtensions(body []byte) (extensions, *apiError) {
	var ext extensions
	if err := json.Unmarshal(body, &ext); err != nil {
		return ext, badRequest("", "invalid JSON body: %v", err).as(KindMalformedJSON)
	}
	if ext.MinTokens != nil && *ext.MinTokens < 0 {
		return ext, badRequest("min_tokens", "min_tokens must be at least 0, got %d", *ext.MinTokens)
	}
	return ext, nil
}

// check rejects a min_tokens above the effective max_tokens, as vLLM does.
func (e extensions) check(maxTokens int) *apiError {
	if n := e.minTokens(); n > maxTokens {
		return badRequest("min_tokens", "min_tokens must be less than or equal to max_tokens (%d), got %d", maxTokens, n)
	}
	return nil
}

func (e extensions) ignoreEOS() bool { return e.IgnoreEOS != nil && *e.IgnoreEOS }

func (e extensions) minTokens() int {
	if e.MinTokens == nil {
		return 0
	}
	return *e.MinTokens
}

// blame names the kind of a request whose prompt and max_tokens together
// overflow the context: whichever of the two is the larger share.
func blame(prompt, maxTokens int) string {
	if maxTokens >= prompt {
		return KindHugeMaxTokens
	}
	return KindOverlong
}
