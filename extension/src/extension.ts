// Entry point: wires the pieces together. Each piece lives in its own file.
import * as vscode from 'vscode';
import { AccessMapManager } from './accessMapPanel';
import { COMMANDS, registerCommands } from './commands';
import { CursorSync } from './cursorSync';
import { KernelDebugger, RUN_PLAN, type RunPlan } from './debug';
import { InterpreterResolver } from './python';
import { ServerManager } from './server';
import { StatusBar } from './statusBar';

export interface TritonLensApi {
  server: ServerManager;
  accessMap: AccessMapManager;
  status: StatusBar;
}

let server: ServerManager | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<TritonLensApi> {
  const log = vscode.window.createOutputChannel('Triton Lens', { log: true });
  const status = new StatusBar(COMMANDS.showOutput);
  const resolver = new InterpreterResolver(log);
  const manager = new ServerManager(context.extensionPath, log, status, resolver);
  server = manager;
  const accessMap = new AccessMapManager(context, server, log);
  const cursor = new CursorSync(() => accessMap.panel, undefined, manager);
  const kernelDebugger = new KernelDebugger(context.extensionPath, resolver, log, manager, (uri, text) =>
    manager.request<RunPlan>(RUN_PLAN, { uri: uri.toString(), text }),
  );
  context.subscriptions.push(
    log,
    status,
    resolver,
    server,
    accessMap,
    cursor,
    kernelDebugger,
    ...registerCommands({ server, log, accessMap, cursor, debugger: kernelDebugger }),
  );
  log.info(`Triton Lens ${context.extension.packageJSON.version} activated`);
  void server.start();
  return { server, accessMap, status };
}

export async function deactivate(): Promise<void> {
  await server?.dispose();
  server = undefined;
}
