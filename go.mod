module github.com/llmload/llmload

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/sashabaranov/go-openai v1.43.0
	github.com/spf13/pflag v1.1.0
	github.com/tiktoken-go/tokenizer v0.10.0
	github.com/yuin/gopher-lua v1.1.2
	golang.org/x/term v0.48.0
)

require (
	github.com/dlclark/regexp2/v2 v2.5.1 // indirect
	github.com/prometheus/common v0.73.1 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
