package lang

import (
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"

	"github.com/fuscia/fuscia/internal/bounds"
)

// VarInputs are the sources of variable values. Later sources win: the environment, then each
// -var-file in order, then each -var in order (docs/reference/language.md).
type VarInputs struct {
	Env   []string // KEY=VALUE pairs, as os.Environ returns; only FUSCIA_VAR_* are read
	Files []string // -var-file paths: HCL files of `name = value` lines
	Flags []string // -var arguments: name=value
	// Values are values already decided, such as a saved plan's or a call's inputs. They are
	// converted to each variable's type and win over every other source.
	Values map[string]cty.Value
}

// EnvPrefix is the prefix of environment variables that set workflow variables.
const EnvPrefix = "FUSCIA_VAR_"

// resolveVars computes variable values from in. With planning set, a variable that has neither a
// value nor a default is an error; otherwise it stays unset (unknown while validating).
func resolveVars(p *Parser, decls []*Variable, in VarInputs, planning bool) (map[string]cty.Value, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	byName := make(map[string]*Variable, len(decls))
	for _, v := range decls {
		byName[v.Name] = v
	}
	values := make(map[string]cty.Value)
	// attempted records variables given a value that was refused, so that they are not also
	// reported as missing.
	attempted := make(map[string]bool)
	for _, kv := range in.Env {
		key, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(key, EnvPrefix) {
			continue
		}
		v := byName[strings.TrimPrefix(key, EnvPrefix)]
		if v == nil {
			continue // undeclared FUSCIA_VAR_ are ignored: they may be meant for another workflow
		}
		val, diag := parseRawVar(v, raw, "environment variable "+key)
		diags = append(diags, diag...)
		attempted[v.Name] = true
		if diag == nil {
			values[v.Name] = val
		}
	}
	for _, file := range in.Files {
		if _, err := os.Stat(file); err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Cannot read variable file",
				Detail: fmt.Sprintf("The -var-file %s could not be read: %s.", file, describeFSError(err))})
			continue
		}
		f, fdiags := p.ParseFile(file)
		diags = append(diags, fdiags...)
		if f == nil || fdiags.HasErrors() {
			continue
		}
		attrs, adiags := f.Body.JustAttributes()
		diags = append(diags, adiags...)
		for _, attr := range sortedAttrs(attrs) {
			v := byName[attr.Name]
			if v == nil {
				diags = append(diags, errorf(attr.NameRange, "Undeclared variable",
					"The variable file sets %q, but the workflow declares no such variable.%s", attr.Name, declaredVars(decls)))
				continue
			}
			attempted[v.Name] = true
			val, vdiags := attr.Expr.Value(nil)
			diags = append(diags, literalOnly(vdiags, "A value in a variable file")...)
			if vdiags.HasErrors() {
				continue
			}
			cv, err := convertValue(val, v.Type)
			if err == nil {
				err = bounds.CheckValue(cv)
			}
			if err != nil {
				diags = append(diags, errorf(attr.Expr.Range(), "Invalid value for variable",
					"Variable %q has type %s: %s.", v.Name, typeexpr.TypeString(v.Type), err))
				continue
			}
			values[v.Name] = cv
		}
	}
	for _, flag := range in.Flags {
		name, raw, ok := strings.Cut(flag, "=")
		if !ok {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid -var option",
				Detail: fmt.Sprintf("The option -var %q has no \"=\": write -var NAME=VALUE.", flag)})
			continue
		}
		v := byName[name]
		if v == nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable",
				Detail: fmt.Sprintf("The option -var %q sets %q, but the workflow declares no such variable.%s", flag, name, declaredVars(decls))})
			continue
		}
		val, diag := parseRawVar(v, raw, "option -var "+name)
		diags = append(diags, diag...)
		attempted[v.Name] = true
		if diag == nil {
			values[v.Name] = val
		}
	}
	for name, val := range in.Values {
		v := byName[name]
		if v == nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable",
				Detail: fmt.Sprintf("A value is given for %q, but the workflow declares no such variable.%s", name, declaredVars(decls))})
			continue
		}
		attempted[v.Name] = true
		cv, err := convertValue(val, v.Type)
		if err == nil {
			err = bounds.CheckValue(cv)
		}
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value for variable",
				Detail: fmt.Sprintf("Variable %q has type %s: %s.", v.Name, typeexpr.TypeString(v.Type), err)})
			continue
		}
		values[v.Name] = cv
	}
	if planning {
		for _, v := range decls {
			if _, set := values[v.Name]; !set && !v.HasDefault && !attempted[v.Name] {
				diags = append(diags, errorf(v.DeclRange, "No value for required variable",
					"Variable %q has no default and was not set. Set it with -var %s=VALUE, a -var-file, or the environment variable %s%s.",
					v.Name, v.Name, EnvPrefix, v.Name))
			}
		}
	}
	return values, diags
}

// parseRawVar turns a command-line or environment string into a value of v's type: strings are
// taken as they are, other types are parsed as HCL expressions (like Terraform's -var).
func parseRawVar(v *Variable, raw, source string) (cty.Value, hcl.Diagnostics) {
	if v.Type == cty.String || v.Type == cty.DynamicPseudoType {
		return cty.StringVal(raw), nil
	}
	fail := func(why string) (cty.Value, hcl.Diagnostics) {
		return cty.NilVal, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Invalid value for variable",
			Detail: fmt.Sprintf("The %s sets variable %q to %q, which is not a valid %s: %s.", source, v.Name, raw, typeexpr.TypeString(v.Type), why)}}
	}
	if d := checkNesting(source, []byte(raw)); d != nil {
		return fail(fmt.Sprintf("it nests more than %d levels deep", MaxNestingDepth))
	}
	expr, pdiags := hclsyntax.ParseExpression([]byte(raw), source, hcl.InitialPos)
	if pdiags.HasErrors() {
		return fail("it does not parse as an HCL value")
	}
	val, vdiags := expr.Value(nil)
	if vdiags.HasErrors() {
		return fail("write it as an HCL value such as 42, true, [\"a\", \"b\"] or { key = \"value\" }")
	}
	cv, err := convertValue(val, v.Type)
	if err == nil {
		err = bounds.CheckValue(cv)
	}
	if err != nil {
		return fail(err.Error())
	}
	return cv, nil
}

func declaredVars(decls []*Variable) string {
	if len(decls) == 0 {
		return " It declares no variables."
	}
	names := make([]string, len(decls))
	for i, v := range decls {
		names[i] = v.Name
	}
	return " Declared variables: " + strings.Join(names, ", ") + "."
}

func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Range.Start.Byte < out[j-1].Range.Start.Byte; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// convertValue is convert.Convert, with a tuple made a list or a set element by element: go-cty
// unifies a tuple's element types pair by pair first, so that a list of 20,000 numbers given
// to a list(number) variable took 7 s, and 100,000 (the for_each bound) minutes. An element
// that does not convert leaves the conversion to go-cty, whose error says which and why.
func convertValue(val cty.Value, ty cty.Type) (cty.Value, error) {
	if (!ty.IsListType() && !ty.IsSetType()) || ty.ElementType().HasDynamicTypes() {
		return convert.Convert(val, ty) // list(any): go-cty picks the elements' common type
	}
	if !val.Type().IsTupleType() || !val.IsKnown() || val.IsNull() || val.IsMarked() {
		return convert.Convert(val, ty)
	}
	elems := val.AsValueSlice()
	if len(elems) == 0 {
		return convert.Convert(val, ty)
	}
	out := make([]cty.Value, len(elems))
	for i, el := range elems {
		cv, err := convertValue(el, ty.ElementType())
		if err != nil || cv.IsMarked() || !cv.Type().Equals(ty.ElementType()) {
			return convert.Convert(val, ty)
		}
		out[i] = cv
	}
	if ty.IsSetType() {
		return cty.SetVal(out), nil
	}
	return cty.ListVal(out), nil
}

// literalOnly adds what to do to hcl's diagnostics about a value that must be literal (a
// variable's default, a line of a variable file), whose details ("Functions may not be called
// here.") say only what is wrong. what names the value, capitalized.
func literalOnly(diags hcl.Diagnostics, what string) hcl.Diagnostics {
	for _, d := range diags {
		switch d.Summary {
		case "Function calls not allowed", "Variables not allowed":
			d.Detail = strings.TrimSpace(d.Detail) + " " + what + " is a literal value: a string, a number, a bool, or a list or object of them, without references or function calls. Compute it in a builtin.transform task instead."
		}
	}
	return diags
}
