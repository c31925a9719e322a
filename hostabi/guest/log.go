package guest

import "strconv"

// Level is the severity of a log line.
type Level int32

// Log levels, as the log import numbers them.
const (
	LevelDebug Level = 0
	LevelInfo  Level = 1
	LevelWarn  Level = 2
	LevelError Level = 3
)

func (l Level) String() string {
	switch l {
	case LevelDebug:
		return "debug"
	case LevelInfo:
		return "info"
	case LevelWarn:
		return "warn"
	case LevelError:
		return "error"
	}
	return "level(" + strconv.Itoa(int(l)) + ")"
}

// Log writes a line to the node's log and the trace. The message is fmt.Sprintf(format,
// args...), or format as is when there are no args.
func Log(level Level, format string, args ...any) { hostLog(level, sprintf(format, args...)) }

// Debugf logs at LevelDebug.
func Debugf(format string, args ...any) { hostLog(LevelDebug, sprintf(format, args...)) }

// Infof logs at LevelInfo.
func Infof(format string, args ...any) { hostLog(LevelInfo, sprintf(format, args...)) }

// Warnf logs at LevelWarn.
func Warnf(format string, args ...any) { hostLog(LevelWarn, sprintf(format, args...)) }

// Errorf logs at LevelError. It does not make an error: see Fatal, Retryable and Validation.
func Errorf(format string, args ...any) { hostLog(LevelError, sprintf(format, args...)) }
