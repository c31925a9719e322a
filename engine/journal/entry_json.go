package journal

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/fuscia/fuscia/internal/jsonenc"
)

// appendEntryJSON appends the JSON of e to b: byte for byte what encoding/json makes of it
// (fields in order, omitempty and omitzero, HTML-safe strings, raw messages compacted), which
// the journal's readers and its golden fixtures expect. It is the encoder of every entry
// (encodeEntries), and encoding/json's reflection over Entry's 26 fields was most of an
// entry's cost to journal (docs/performance.md, item 1, session 17). The rare fields (an
// error, a progress) are encoded by encoding/json itself; a run's information, written once
// per run, by appendRunInfoJSON. TestEntryJSONMatchesEncodingJSON and FuzzEntryJSON hold it
// to encoding/json.
func appendEntryJSON(b []byte, e *Entry) ([]byte, error) {
	var err error
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = appendNamedString(b, `,"type":`, string(e.Type))
	b = append(b, `,"time":`...)
	if b, err = appendJSONTime(b, e.Time); err != nil {
		return nil, err
	}
	b = appendStringField(b, `,"node":`, e.Node)
	if len(e.Index) > 0 {
		b = append(b, `,"index":[`...)
		for i, n := range e.Index {
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(n), 10)
		}
		b = append(b, ']')
	}
	if b, err = appendRawField(b, `,"key":`, e.Key); err != nil {
		return nil, err
	}
	if e.Attempt != 0 {
		b = append(b, `,"attempt":`...)
		b = strconv.AppendInt(b, int64(e.Attempt), 10)
	}
	b = appendStringField(b, `,"task_id":`, e.TaskID)
	if b, err = appendRawField(b, `,"input":`, e.Input); err != nil {
		return nil, err
	}
	b = appendStringField(b, `,"status":`, e.Status)
	if b, err = appendRawField(b, `,"output":`, e.Output); err != nil {
		return nil, err
	}
	if e.Error != nil {
		if b, err = appendMarshaled(b, `,"error":`, e.Error); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, `,"reason":`, e.Reason)
	b = appendStringField(b, `,"selected":`, e.Selected)
	if b, err = appendRawField(b, `,"state":`, e.State); err != nil {
		return nil, err
	}
	if e.Progress != 0 {
		if b, err = appendMarshaled(b, `,"progress":`, e.Progress); err != nil {
			return nil, err
		}
	}
	if !e.RetryAt.IsZero() {
		b = append(b, `,"retry_at":`...)
		if b, err = appendJSONTime(b, e.RetryAt); err != nil {
			return nil, err
		}
	}
	if !e.Deadline.IsZero() {
		b = append(b, `,"deadline":`...)
		if b, err = appendJSONTime(b, e.Deadline); err != nil {
			return nil, err
		}
	}
	b = appendStringField(b, `,"wait_kind":`, e.WaitKind)
	if e.Rejected {
		b = append(b, `,"rejected":true`...)
	}
	b = appendStringField(b, `,"answered_by":`, e.AnsweredBy)
	if e.Total != 0 {
		b = append(b, `,"total":`...)
		b = strconv.AppendInt(b, int64(e.Total), 10)
	}
	b = appendStringField(b, `,"child_execution_id":`, e.ChildID)
	if e.Run != nil {
		if b, err = appendRunInfoJSON(append(b, `,"run":`...), e.Run); err != nil {
			return nil, err
		}
	}
	if b, err = appendRawField(b, `,"outputs":`, e.Outputs); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendRunInfoJSON appends the JSON of a run_started entry's information, as encoding/json
// encodes it (Bodies' keys sorted).
func appendRunInfoJSON(b []byte, ri *RunInfo) ([]byte, error) {
	var err error
	b = appendNamedString(b, `{"workflow":`, ri.Workflow)
	b = appendNamedString(b, `,"file":`, ri.File)
	b = appendNamedString(b, `,"plan_digest":`, ri.PlanDigest)
	b = appendNamedString(b, `,"trigger":{"type":`, ri.Trigger.Type)
	b = appendNamedString(b, `,"name":`, ri.Trigger.Name)
	if b, err = appendRawField(b, `,"payload":`, ri.Trigger.Payload); err != nil {
		return nil, err
	}
	b = append(b, '}')
	if b, err = appendRawField(b, `,"vars":`, ri.Vars); err != nil {
		return nil, err
	}
	b = appendNamedString(b, `,"durability":`, ri.Durability)
	if ri.Parallelism != 0 {
		b = append(b, `,"parallelism":`...)
		b = strconv.AppendInt(b, int64(ri.Parallelism), 10)
	}
	b = appendStringField(b, `,"parent_execution_id":`, ri.Parent)
	b = appendStringField(b, `,"parent_node":`, ri.ParentNode)
	b = appendJSONStrings(append(b, `,"nodes":`...), ri.Nodes)
	if len(ri.Bodies) > 0 {
		b = append(b, `,"bodies":{`...)
		for i, loop := range slices.Sorted(maps.Keys(ri.Bodies)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonenc.String(b, loop), ':')
			b = appendJSONStrings(b, ri.Bodies[loop])
		}
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

// appendSummaryJSON appends the JSON of a run's summary, as encoding/json encodes it; the
// store writes one at each status change of every run.
func appendSummaryJSON(b []byte, s *Summary) ([]byte, error) {
	var err error
	b = appendNamedString(b, `{"execution_id":`, s.ID)
	b = appendNamedString(b, `,"workflow":`, s.Workflow)
	b = appendNamedString(b, `,"status":`, s.Status)
	b = appendNamedString(b, `,"trigger":{"type":`, s.Trigger.Type)
	b = appendNamedString(b, `,"name":`, s.Trigger.Name)
	b = append(b, `},"started_at":`...)
	if b, err = appendJSONTime(b, s.StartedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"finished_at":`...)
	if s.FinishedAt == nil {
		b = append(b, "null"...)
	} else if b, err = appendJSONTime(b, *s.FinishedAt); err != nil {
		return nil, err
	}
	b = append(b, `,"parent_execution_id":`...)
	if s.Parent == nil {
		b = append(b, "null"...)
	} else {
		b = jsonenc.String(b, *s.Parent)
	}
	return append(b, '}'), nil
}

// appendJSONStrings appends a list of strings; nil is null, as encoding/json has it.
func appendJSONStrings(b []byte, list []string) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.String(b, s)
	}
	return append(b, ']')
}

// appendStringField appends name and s, unless s is empty (omitempty).
func appendStringField(b []byte, name, s string) []byte {
	if s == "" {
		return b
	}
	return appendNamedString(b, name, s)
}

// appendNamedString appends name (the field's name, its punctuation around it) and s.
func appendNamedString(b []byte, name, s string) []byte {
	return jsonenc.String(append(b, name...), s)
}

// appendRawField appends name and raw, compacted, unless raw is empty (omitempty). Like
// encoding/json, it refuses raw that is not JSON and escapes <, >, & and U+2028/U+2029 in it.
func appendRawField(b []byte, name string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return b, nil
	}
	b, err := jsonenc.Raw(append(b, name...), raw)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// appendMarshaled appends name and v as encoding/json encodes it.
func appendMarshaled(b []byte, name string, v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(append(b, name...), data...), nil
}

// appendJSONTime appends t as time.Time's MarshalJSON does, with its errors.
func appendJSONTime(b []byte, t time.Time) ([]byte, error) {
	n := len(b)
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	// MarshalJSON's checks (time.Time.appendStrictRFC3339): a year of four digits, and a zone
	// whose hour is within [0,23].
	switch s := b[n+1:]; {
	case len(s) < 5 || s[4] != '-':
		return nil, errors.New("Time.MarshalJSON: year outside of range [0,9999]")
	case s[len(s)-1] != 'Z':
		c := s[len(s)-len("Z07:00")]
		h := 10*(s[len(s)-5]-'0') + (s[len(s)-4] - '0')
		if '0' <= c && c <= '9' || h >= 24 {
			return nil, errors.New("Time.MarshalJSON: timezone hour outside of range [0,23]")
		}
	}
	return append(b, '"'), nil
}
