module github.com/llmload/llmload

go 1.26.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	github.com/sashabaranov/go-openai v1.43.0
	github.com/spf13/pflag v1.1.0
	github.com/yuin/gopher-lua v1.1.2
	golang.org/x/term v0.48.0
)

require golang.org/x/sys v0.50.0 // indirect
