package lang

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
)

// loadScheduleTrigger loads a workflow with one schedule trigger whose body is attrs.
func loadScheduleTrigger(t *testing.T, attrs string) (*Workflow, hcl.Diagnostics) {
	t.Helper()
	const name = "schedule.fsc.hcl"
	src := "workflow \"w\" {}\n\ntrigger \"schedule\" \"nightly\" {\n" + attrs + "\n}\n"
	p := NewParser()
	p.Sources = map[string][]byte{name: []byte(src)}
	return p.Load(name, Options{})
}

func TestScheduleTriggerDiagnostics(t *testing.T) {
	const howTo = ` A schedule's cron has 5 fields (minute hour day-of-month month day-of-week), e.g. "0 9 * * 1-5".`
	type diag struct {
		line            int
		summary, detail string
	}
	cronDiag := func(detail string) diag { return diag{4, "Invalid cron expression", detail + howTo} }
	tests := []struct {
		name  string
		attrs string
		want  []diag
	}{
		{"valid", "  cron     = \"0 9 * * 1-5\"\n  timezone = \"Europe/Berlin\"", nil},
		{"valid descriptor", "  cron = \"@daily\"", nil},
		{"valid names and lists", "  cron = \"*/15 8-18 * jan-jun MON,wed,FRI\"", nil},
		{"four fields", "  cron = \"0 9 * *\"",
			[]diag{cronDiag(`"0 9 * *" has 4 fields, not 5.`)}},
		{"six fields", "  cron = \"0 0 9 * * 1\"",
			[]diag{cronDiag(`"0 0 9 * * 1" has 6 fields, not 5.`)}},
		{"empty", "  cron = \"\"",
			[]diag{cronDiag(`The cron expression is empty.`)}},
		{"out of range", "  cron = \"61 * * * *\"",
			[]diag{cronDiag(`"61 * * * *": minute 61 is out of range 0-59.`)}},
		{"bad month name", "  cron = \"0 9 * foo *\"",
			[]diag{cronDiag(`"0 9 * foo *": month "foo" is not valid: "foo" is not a number 1-12 or a name jan-dec.`)}},
		{"never fires", "  cron = \"0 0 30 2 *\"",
			[]diag{cronDiag(`"0 0 30 2 *" never fires: none of its months has a day 30.`)}},
		{"tz prefix", "  cron = \"CRON_TZ=Europe/Berlin 0 9 * * *\"",
			[]diag{cronDiag(`"CRON_TZ=Europe/Berlin 0 9 * * *": the time zone goes in the timezone attribute, not in a CRON_TZ= prefix.`)}},
		{"every", "  cron = \"@every 1h\"",
			[]diag{cronDiag(`"@every 1h" is not supported: a schedule fires at clock times, e.g. "*/5 * * * *", not at intervals.`)}},
		// A bad zone is reported once, as a zone problem; the expression is still checked.
		{"bad zone only", "  cron     = \"0 9 * * *\"\n  timezone = \"Mars/Olympus\"",
			[]diag{{5, "Unknown time zone", `"Mars/Olympus" is not an IANA time zone name such as "UTC" or "Europe/Berlin".`}}},
		// The machine's zone is not a zone the file names.
		{"local zone", "  cron     = \"0 9 * * *\"\n  timezone = \"Local\"",
			[]diag{{5, "Unknown time zone", `"Local" is not an IANA time zone name such as "UTC" or "Europe/Berlin".`}}},
		{"bad zone and bad cron", "  cron     = \"0 9 * * 8\"\n  timezone = \"Mars/Olympus\"",
			[]diag{
				cronDiag(`"0 9 * * 8": day-of-week 8 is out of range 0-7.`),
				{5, "Unknown time zone", `"Mars/Olympus" is not an IANA time zone name such as "UTC" or "Europe/Berlin".`},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, diags := loadScheduleTrigger(t, tt.attrs)
			var got []diag
			for _, d := range diags {
				line := 0
				if d.Subject != nil {
					line = d.Subject.Start.Line
				}
				got = append(got, diag{line, d.Summary, d.Detail})
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("diagnostics:\n got %+v\nwant %+v", got, tt.want)
			}
			if len(tt.want) == 0 {
				if w == nil || len(w.Triggers) != 1 || w.Triggers[0].Type != TriggerSchedule {
					t.Fatalf("want one schedule trigger, got %+v", w)
				}
				tr := w.Triggers[0]
				if !strings.Contains(tt.attrs, tr.Cron) || tr.Timezone == "" {
					t.Errorf("trigger cron %q timezone %q", tr.Cron, tr.Timezone)
				}
			}
		})
	}
}
