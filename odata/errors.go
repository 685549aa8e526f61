package odata

import "fmt"

// SyntaxError reports why a query option could not be parsed. Its message is
// meant to be returned to the client as is.
type SyntaxError struct {
	Option string // the query option that failed: "$filter" or "$orderby"
	Pos    int    // 0-based byte offset into the query option value
	Msg    string
}

// inOption names the option err, if a *SyntaxError, was found in.
func inOption(option string, err error) error {
	if se, ok := err.(*SyntaxError); ok {
		se.Option = option
	}
	return err
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("position %d: %s", e.Pos, e.Msg)
}

// ParamError reports an invalid $skip or $top value.
type ParamError struct {
	Param string // "$skip" or "$top"
	Msg   string
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("invalid %s: %s", e.Param, e.Msg)
}
