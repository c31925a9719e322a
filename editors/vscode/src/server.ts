// The command line of the language server, from the extension's settings. It is kept apart
// from extension.ts, with no import of 'vscode', so that it can be tested with node alone.

import * as path from 'node:path';

// ServerSettings are the settings fuscia.path, fuscia.pluginDirs and fuscia.home as the user
// wrote them.
export interface ServerSettings {
  path: string;
  pluginDirs: readonly string[];
  home: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

// serverCommand is `fuscia lsp` with a -plugin-dir per plugin directory and -home when one is
// set, the flags `fuscia validate` takes, so that the editor sees what validate would.
//
// A leading ~ is the user's home directory. A relative path is taken from workspaceRoot, the
// first workspace folder, when there is one: settings are written for a project, and the
// server's working directory is not something a user can see. fuscia.path without a slash is
// a name for the operating system to find on PATH, like "fuscia".
export function serverCommand(s: ServerSettings, workspaceRoot: string | undefined, homeDir: string): ServerCommand {
  const resolve = (p: string): string => {
    if (p === '~') {
      return homeDir;
    }
    if (p.startsWith('~/') || p.startsWith('~\\')) {
      return path.join(homeDir, p.slice(2));
    }
    if (workspaceRoot !== undefined && !path.isAbsolute(p)) {
      return path.resolve(workspaceRoot, p);
    }
    return p;
  };

  let command = s.path.trim();
  if (command === '') {
    command = 'fuscia';
  } else if (command.startsWith('~') || /[\\/]/.test(command)) {
    command = resolve(command);
  }

  const args = ['lsp'];
  for (const dir of s.pluginDirs) {
    const d = dir.trim();
    if (d !== '') {
      args.push('-plugin-dir', resolve(d));
    }
  }
  const home = s.home.trim();
  if (home !== '') {
    args.push('-home', resolve(home));
  }
  return { command, args };
}
