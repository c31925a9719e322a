// Command wrongcookie is a go-plugin plugin that expects another magic cookie than Fuscia's.
package main

import (
	goplugin "github.com/hashicorp/go-plugin"
)

func main() {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: goplugin.HandshakeConfig{ProtocolVersion: 1, MagicCookieKey: "FUSCIA_PLUGIN", MagicCookieValue: "not-fuscia"},
		Plugins:         goplugin.PluginSet{},
		GRPCServer:      goplugin.DefaultGRPCServer,
	})
}
