package serve

import (
	"context"
	"log/slog"
)

// triggerLog is the log function a component or plugin trigger gets (engine.InvokeTrigger):
// each line goes to log at the trigger's own level. The levels are the names a task's log lines
// are journaled with (debug, info, warn, error: the host ABI's and the plugin protocol's), which
// are slog's level names too, so slog's parser maps them, as it maps FUSCIA_LOG_LEVEL; anything
// else is info. The level is the record's, never an attribute: a JSON line has one "level" key.
func triggerLog(log *slog.Logger) func(level, msg string) {
	return func(level, msg string) {
		var lv slog.Level
		if err := lv.UnmarshalText([]byte(level)); err != nil {
			lv = slog.LevelInfo
		}
		log.Log(context.Background(), lv, msg)
	}
}
