package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The names of the tools, the prompt and the resource template.
const (
	ToolListSkills    = "list_skills"
	ToolSearchSkills  = "search_skills"
	ToolLoadSkill     = "load_skill"
	ToolReadSkillFile = "read_skill_file"
	PromptName        = "available_skills"
	ResourceTemplate  = "skill://{agentId}/{+read_path}"
	MarkdownType      = "text/markdown"
)

// Search limits of search_skills.
const (
	DefaultSearchLimit = 10
	MaxSearchLimit     = 50
)

// ListedSkill is a skill of list_skills and search_skills.
type ListedSkill struct {
	Name        string `json:"name" jsonschema:"the skill's name"`
	Description string `json:"description" jsonschema:"what the skill is for"`
	ReadPath    string `json:"read_path" jsonschema:"skills/{dir}/SKILL.md: the path load_skill reads, and the resource skill://{agentId}/{read_path}"`
	Location    string `json:"location" jsonschema:"the skill's storage key"`
	Version     string `json:"version,omitempty" jsonschema:"the skill's version as its SKILL.md writes it; absent when it has none"`
	Hosts       *Hosts `json:"hosts,omitempty" jsonschema:"for a skill with host requirements: the connected hosts that can run it"`
}

// FoundSkill is a skill of search_skills: a listed skill with its score.
type FoundSkill struct {
	Name        string  `json:"name" jsonschema:"the skill's name"`
	Description string  `json:"description" jsonschema:"what the skill is for"`
	ReadPath    string  `json:"read_path" jsonschema:"skills/{dir}/SKILL.md: the path load_skill reads"`
	Location    string  `json:"location" jsonschema:"the skill's storage key"`
	Version     string  `json:"version,omitempty" jsonschema:"the skill's version as its SKILL.md writes it; absent when it has none"`
	Hosts       *Hosts  `json:"hosts,omitempty" jsonschema:"for a skill with host requirements: the connected hosts that can run it"`
	Score       float64 `json:"score" jsonschema:"relevance to the query (BM25 over name and description); higher is better"`
}

// ListResult is the structured result of list_skills.
type ListResult struct {
	Skills []ListedSkill `json:"skills"`
}

// SearchResult is the structured result of search_skills.
type SearchResult struct {
	Skills []FoundSkill `json:"skills"`
}

// FileResult is the structured result of load_skill and read_skill_file.
type FileResult struct {
	Name     string `json:"name" jsonschema:"the skill's name"`
	ReadPath string `json:"read_path" jsonschema:"the file's read path, skills/{dir}/…"`
	Text     string `json:"text" jsonschema:"the file's content"`
}

type listArgs struct{}

type searchArgs struct {
	Query string `json:"query" jsonschema:"words to look for in the skills' names and descriptions (at most 512 bytes and 32 words)"`
	Limit int    `json:"limit,omitempty" jsonschema:"how many skills at most: default 10, at most 50 (more is clamped)"`
}

type loadArgs struct {
	Name string `json:"name" jsonschema:"the skill's name or its directory, as list_skills shows them"`
}

type readArgs struct {
	Name string `json:"name" jsonschema:"the skill's name or its directory, as list_skills shows them"`
	Path string `json:"path" jsonschema:"the file's path in the skill directory, e.g. scripts/run.sh or SKILL.md"`
}

// serverConfig is what newServer needs besides the backend.
type serverConfig struct {
	name, version string
	logger        *slog.Logger
	getSessionID  func() string // nil: the SDK's
}

// newServer returns an MCP server of one agent's skills.
func newServer(b Backend, agentID string, c serverConfig) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: c.name, Version: c.version}, &sdk.ServerOptions{
		Instructions: "The skills agent " + agentID + " may use now, given the hosts connected to the gateway. " +
			"list_skills or search_skills to find one, load_skill to read its SKILL.md and follow it, " +
			"read_skill_file for the other files it names.",
		Logger: c.logger,
		// Tools and the prompt are fixed; the resources follow the agent's
		// eligible skills.
		Capabilities: &sdk.ServerCapabilities{
			Tools:     &sdk.ToolCapabilities{},
			Prompts:   &sdk.PromptCapabilities{},
			Resources: &sdk.ResourceCapabilities{ListChanged: true},
		},
		GetSessionID: c.getSessionID,
	})
	tool := func(name, desc string, in, out *jsonschema.Schema, h sdk.ToolHandler) {
		srv.AddTool(&sdk.Tool{Name: name, Description: desc, InputSchema: in, OutputSchema: out,
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(bool)}}, h)
	}
	tool(ToolListSkills, "Lists every skill this agent may use now (eligible on the connected hosts), in priority order: "+
		"name, description, read_path and location, and for a skill that needs particular hosts, how many can run it and which.",
		toolSchemas.list, toolSchemas.listOut,
		handle(func(ctx context.Context, _ listArgs) ([]sdk.Content, any, error) {
			skills, err := b.Skills(ctx, agentID, true)
			if err != nil {
				return nil, nil, err
			}
			out := ListResult{Skills: make([]ListedSkill, len(skills))}
			for i, s := range skills {
				out.Skills[i] = ListedSkill{Name: s.Name, Description: s.Description, ReadPath: s.ReadPath, Location: s.Location, Version: s.Version, Hosts: s.Hosts}
			}
			return nil, out, nil
		}))

	tool(ToolSearchSkills, "Finds this agent's eligible skills by topic: the skills whose name and description match the query, best first, each with its score.",
		toolSchemas.search, toolSchemas.searchOut,
		handle(func(ctx context.Context, in searchArgs) ([]sdk.Content, any, error) {
			if strings.TrimSpace(in.Query) == "" {
				return nil, nil, errors.New("query is empty: give a few words to look for (list_skills lists every skill)")
			}
			limit := in.Limit
			switch {
			case limit < 0:
				return nil, nil, errors.New("limit: must be a whole number from 1 to 50 (default 10)")
			case limit == 0:
				limit = DefaultSearchLimit
			case limit > MaxSearchLimit:
				limit = MaxSearchLimit
			}
			skills, err := b.Search(ctx, agentID, in.Query, limit)
			if err != nil {
				return nil, nil, err
			}
			out := SearchResult{Skills: make([]FoundSkill, len(skills))}
			for i, s := range skills {
				out.Skills[i] = FoundSkill(s)
			}
			return nil, out, nil
		}))

	tool(ToolLoadSkill, "Reads a skill's SKILL.md (by the skill's name or directory): its instructions, to follow when the task matches it.",
		toolSchemas.load, toolSchemas.file,
		handle(func(ctx context.Context, in loadArgs) ([]sdk.Content, any, error) {
			if in.Name == "" {
				return nil, nil, errors.New("name is empty: give a skill's name or directory (list_skills lists them)")
			}
			return fileResult(b.ReadFile(ctx, agentID, in.Name, "SKILL.md"))(in.Name, agentID)
		}))

	tool(ToolReadSkillFile, "Reads another file of a skill's directory, such as a script or a reference its SKILL.md names; path is relative to the directory.",
		toolSchemas.read, toolSchemas.file,
		handle(func(ctx context.Context, in readArgs) ([]sdk.Content, any, error) {
			switch {
			case in.Name == "":
				return nil, nil, errors.New("name is empty: give a skill's name or directory (list_skills lists them)")
			case in.Path == "":
				return nil, nil, errors.New("path is empty: give a file of the skill directory, e.g. SKILL.md or scripts/run.sh")
			}
			return fileResult(b.ReadFile(ctx, agentID, in.Name, in.Path))(in.Name, agentID)
		}))

	srv.AddPrompt(&sdk.Prompt{Name: PromptName,
		Description: "The <available_skills> block of this agent, fitted to the gateway's prompt budget, to paste into a system prompt (empty when no skill is eligible)."},
		func(ctx context.Context, _ *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			block, err := b.Prompt(ctx, agentID)
			if err != nil {
				return nil, err
			}
			return &sdk.GetPromptResult{
				Description: "the skills agent " + agentID + " may use now",
				Messages:    []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: block}}},
			}, nil
		})

	addTemplate(srv, b, agentID)
	srv.AddReceivingMiddleware(listResources(b, agentID))
	return srv
}

// fileResult turns a read into a tool's answer: the file's text as the
// content, and {name, read_path, text}.
func fileResult(f File, err error) func(name, agentID string) ([]sdk.Content, any, error) {
	return func(name, agentID string) ([]sdk.Content, any, error) {
		switch {
		case errors.Is(err, ErrNotAvailable):
			return nil, nil, errors.New(NotAvailable(name, agentID))
		case err != nil:
			return nil, nil, err
		case !utf8.Valid(f.Body):
			return nil, nil, errors.New(f.ReadPath + " is not UTF-8 text (" + itoa(len(f.Body)) +
				" bytes); fetch it with GET /v1/agents/" + agentID + "/read?path=" + f.ReadPath)
		}
		text := string(f.Body)
		return []sdk.Content{&sdk.TextContent{Text: text}}, FileResult{Name: f.Name, ReadPath: f.ReadPath, Text: text}, nil
	}
}

// handle is a tool handler of arguments In: they are decoded strictly (an
// unknown or mistyped argument is a tool error saying so), and the result
// is content (nil: the structured result as JSON text) with a structured
// result; an error is the tool's error result, its text the error's. The
// SDK's generic handlers would validate the output against its schema
// too, decoding every file read twice more: these types are the schemas.
func handle[In any](f func(context.Context, In) ([]sdk.Content, any, error)) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in In
		if args := req.Params.Arguments; len(args) > 0 && string(args) != "null" {
			dec := json.NewDecoder(bytes.NewReader(args))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&in); err != nil {
				return toolError(argumentsError(err)), nil
			}
		}
		content, out, err := f(ctx, in)
		if err != nil {
			return toolError(err.Error()), nil
		}
		if content == nil {
			b, err := json.Marshal(out)
			if err != nil {
				return nil, err
			}
			content = []sdk.Content{&sdk.TextContent{Text: string(b)}}
			out = json.RawMessage(b)
		}
		return &sdk.CallToolResult{Content: content, StructuredContent: out}, nil
	}
}

// argumentsError says what is wrong with a tool's arguments, in the
// schema's words rather than Go's.
func argumentsError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return "argument " + te.Field + ": must be " + jsonType(te.Type.Kind().String()) + ", got " + te.Value
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if f, ok := strings.CutPrefix(msg, "unknown field "); ok {
		return "unknown argument " + f
	}
	return "arguments: " + msg + " (expected a JSON object)"
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "int", "int64":
		return "a whole number"
	case "struct", "map":
		return "an object"
	}
	return kind
}

// toolError is a tool's error result.
func toolError(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// toolSchemas are the tools' argument and result schemas, from the Go types.
var toolSchemas = struct {
	list, search, load, read, listOut, searchOut, file *jsonschema.Schema
}{
	list: schemaOf[listArgs](), search: schemaOf[searchArgs](), load: schemaOf[loadArgs](), read: schemaOf[readArgs](),
	listOut: schemaOf[ListResult](), searchOut: schemaOf[SearchResult](), file: schemaOf[FileResult](),
}

func schemaOf[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(err)
	}
	return s
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// addTemplate (re-)registers the resource template whose handler reads
// every skill:// URI. Registering it again is how a server announces
// notifications/resources/list_changed to its sessions (see touch).
func addTemplate(srv *sdk.Server, b Backend, agentID string) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "skill",
		URITemplate: ResourceTemplate,
		MIMEType:    MarkdownType,
		Description: "A file of one of the agent's eligible skills: skill://{agentId}/skills/{dir}/SKILL.md (resources/list lists every eligible skill's SKILL.md).",
	}, func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		uri := req.Params.URI
		id, p, err := ParseResourceURI(uri)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		dir := p
		if rest, ok := strings.CutPrefix(p, "skills/"); ok {
			dir, _, _ = strings.Cut(rest, "/")
		}
		if id != agentID {
			// Another agent's skills do not exist for this session.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: NotAvailable(dir, agentID)}
		}
		f, err := b.ReadPath(ctx, agentID, p)
		var werr *jsonrpc.Error
		switch {
		case errors.Is(err, ErrNotAvailable):
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: NotAvailable(dir, agentID)}
		case errors.As(err, &werr):
			return nil, werr
		case err != nil:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		case !utf8.Valid(f.Body):
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: "application/octet-stream", Blob: f.Body}}}, nil
		case len(f.Body) == 0: // "text" would be left out of the answer: an empty blob is an answer
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: MarkdownType, Blob: []byte{}}}}, nil
		}
		mime := MarkdownType
		if !strings.HasSuffix(p, ".md") {
			mime = "text/plain"
		}
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: string(f.Body)}}}, nil
	})
}

// listResources answers resources/list from the backend: every eligible
// skill's SKILL.md, in the block's order, in one page.
func listResources(b Backend, agentID string) sdk.Middleware {
	return func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "resources/list" {
				return next(ctx, method, req)
			}
			skills, err := b.Skills(ctx, agentID, false)
			if err != nil {
				return nil, err
			}
			return &sdk.ListResourcesResult{Resources: resources(agentID, skills)}, nil
		}
	}
}

// resources are the resources of an agent's skills.
func resources(agentID string, skills []Skill) []*sdk.Resource {
	out := make([]*sdk.Resource, len(skills))
	for i, s := range skills {
		out[i] = &sdk.Resource{URI: ResourceURI(agentID, s.ReadPath), Name: s.Name, Description: s.Description, MIMEType: MarkdownType}
	}
	return out
}

// fingerprint is a digest of the agent's resource list: list_changed is
// sent when it changes.
func fingerprint(ctx context.Context, b Backend, agentID string) (string, error) {
	skills, err := b.Skills(ctx, agentID, false)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, r := range resources(agentID, skills) {
		h.Write([]byte(r.URI))
		h.Write([]byte{0})
		h.Write([]byte(r.Name))
		h.Write([]byte{0})
		h.Write([]byte(r.Description))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// watch sends notifications/resources/list_changed to srv's sessions (by
// registering its template again) each time the agent's resource list
// differs from the one it last saw, starting from last, until ctx ends.
func watch(ctx context.Context, b Backend, agentID string, srv *sdk.Server, last string) {
	for {
		wait := b.Subscribe(agentID)
		if fp, err := fingerprint(ctx, b, agentID); err == nil && fp != last {
			last = fp
			addTemplate(srv, b, agentID)
		}
		if wait(ctx) != nil {
			return
		}
	}
}
