import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel, KernelMessage } from '@jupyterlab/services';

type Hook = (
  msg: KernelMessage.IIOPubMessage
) => boolean | PromiseLike<boolean>;

const patched = new WeakSet<Kernel.IKernelConnection>();

/**
 * Let ipywidgets' Output widget capture the output of cells run on the server.
 *
 * Inside `with output_widget:`, JupyterLab diverts a run's output into the widget
 * through a message hook on the tab's kernel connection. Such hooks only fire for
 * requests the tab itself sent; a server-side run is sent by the server, so its output
 * (which every kernel connection receives on IOPub) would reach no widget. This keeps
 * the hooks registered for other clients' requests and calls them for their messages.
 */
export function captureServerRunOutputs(sessionContext: ISessionContext): void {
  const attach = (): void => {
    const kernel = sessionContext.session?.kernel;
    if (kernel && !patched.has(kernel)) {
      patched.add(kernel);
      new ForeignHooks(kernel);
    }
  };
  sessionContext.kernelChanged.connect(attach);
  attach();
}

class ForeignHooks {
  constructor(_kernel: Kernel.IKernelConnection) {
    const register = _kernel.registerMessageHook.bind(_kernel);
    const remove = _kernel.removeMessageHook.bind(_kernel);
    _kernel.registerMessageHook = (msgId: string, hook: Hook): void => {
      register(msgId, hook);
      const hooks = this._hooks.get(msgId) ?? [];
      this._hooks.set(msgId, [...hooks, hook]);
    };
    _kernel.removeMessageHook = (msgId: string, hook: Hook): void => {
      remove(msgId, hook);
      const hooks = (this._hooks.get(msgId) ?? []).filter(h => h !== hook);
      if (hooks.length) {
        this._hooks.set(msgId, hooks);
      } else {
        this._hooks.delete(msgId);
      }
    };
    _kernel.iopubMessage.connect(this._onIOPub, this);
    _kernel.disposed.connect(() => this._hooks.clear());
  }

  private _onIOPub(
    kernel: Kernel.IKernelConnection,
    msg: KernelMessage.IIOPubMessage
  ): void {
    const parent = msg.parent_header as Partial<KernelMessage.IHeader>;
    // Requests of this tab reach their hooks through their own futures already.
    if (!parent?.msg_id || parent.session === kernel.clientId) {
      return;
    }
    const hooks = this._hooks.get(parent.msg_id) ?? [];
    // Newest first, and a hook returning false stops the others, as JupyterLab does.
    for (const hook of [...hooks].reverse()) {
      const keepGoing = hook(msg);
      if (keepGoing === false) {
        break;
      }
    }
  }

  private _hooks = new Map<string, Hook[]>();
}
