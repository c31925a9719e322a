// The Fuscia extension: the grammar and language settings are declared in package.json; this
// file starts `fuscia lsp`, the language server, and restarts it when its settings change.

import * as os from 'node:os';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { serverCommand } from './server';

// The settings that change the server's command line: changing one restarts the server.
const serverSettings = ['fuscia.path', 'fuscia.pluginDirs', 'fuscia.home'];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
// Every start and stop is chained on this promise, so that a restart asked for while the
// server is still starting waits for that start instead of racing it.
let pending: Promise<void> = Promise.resolve();

export function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('Fuscia');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('fuscia.restartServer', () => restart()),
    vscode.commands.registerCommand('fuscia.showOutput', () => output.show(true)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (serverSettings.some((key) => e.affectsConfiguration(key))) {
        void restart();
      }
    }),
    // Trust makes the workspace's own fuscia.* settings count (package.json lists them as
    // restricted), so the command line may change.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void restart()),
  );
  return restart();
}

export function deactivate(): Promise<void> {
  return enqueue(stop);
}

function restart(): Promise<void> {
  return enqueue(async () => {
    await stop();
    await start();
  });
}

function enqueue(step: () => Promise<void>): Promise<void> {
  pending = pending.then(step, step);
  return pending;
}

async function start(): Promise<void> {
  const cfg = vscode.workspace.getConfiguration('fuscia');
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  const root = folder?.uri.fsPath;
  const cmd = serverCommand(
    {
      path: cfg.get<string>('path', 'fuscia'),
      pluginDirs: cfg.get<string[]>('pluginDirs', []),
      home: cfg.get<string>('home', ''),
    },
    root,
    os.homedir(),
  );

  // No transport: the client then speaks over the process's stdin and stdout and adds no
  // --stdio flag, which `fuscia lsp` does not take.
  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    options: { cwd: root },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'fuscia' },
      { scheme: 'file', language: 'fuscia-test' },
      { scheme: 'untitled', language: 'fuscia' },
      { scheme: 'untitled', language: 'fuscia-test' },
    ],
    // The server's stderr (its log) and the client's own messages land here; it outlives
    // restarts because the extension, not the client, owns it.
    outputChannel: output,
  };

  output.appendLine(`Starting ${[cmd.command, ...cmd.args].join(' ')}${root ? ` in ${root}` : ''}`);
  const c = new LanguageClient('fuscia', 'Fuscia Language Server', serverOptions, clientOptions);
  try {
    await c.start();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    output.appendLine(`The language server did not start: ${msg}`);
    await c.dispose().catch(() => undefined);
    const choice = await vscode.window.showErrorMessage(
      `Fuscia: could not start the language server "${cmd.command} lsp" (${msg}). ` +
        'Install fuscia, or set fuscia.path to its binary.',
      'Open Settings',
      'Show Output',
    );
    if (choice === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'fuscia.path');
    } else if (choice === 'Show Output') {
      output.show(true);
    }
    return;
  }
  client = c;
}

async function stop(): Promise<void> {
  const c = client;
  client = undefined;
  if (c === undefined) {
    return;
  }
  try {
    // dispose stops the server (shutdown, exit, then a kill if it does not go) and waits.
    await c.dispose(5000);
  } catch (err) {
    output.appendLine(`Stopping the language server: ${err instanceof Error ? err.message : String(err)}`);
  }
}
