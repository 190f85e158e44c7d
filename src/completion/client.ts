import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from '../request';
import {
  ICompletionChunk,
  ICompletionRequest,
  ICompletionStatus
} from './payloads';

/** Whether completions can work on this server, and what they cost so far. */
export function completionStatus(): Promise<ICompletionStatus> {
  return requestAPI<ICompletionStatus>('completion/status');
}

/**
 * Stream a completion: the chunks as the server sends them (newline-delimited
 * JSON). Aborting `signal` closes the request, which stops the model call on
 * the server; the generator then ends quietly.
 *
 * @throws ServerConnection.ResponseError with the server's message on a 4xx/5xx
 */
export async function* streamCompletion(
  request: ICompletionRequest,
  signal: AbortSignal
): AsyncGenerator<ICompletionChunk> {
  const settings = ServerConnection.makeSettings();
  const url = URLExt.join(
    settings.baseUrl,
    'api',
    'jupyter-loop',
    'completion',
    'stream'
  );
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(
      url,
      { method: 'POST', body: JSON.stringify(request), signal },
      settings
    );
  } catch (error) {
    if (signal.aborted) {
      return;
    }
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  if (!response.ok || !response.body) {
    const data = await response.json().catch(() => ({}));
    const message = (data as { message?: string }).message;
    throw new ServerConnection.ResponseError(response, message);
  }
  yield* readLines(response.body.getReader(), signal);
}

async function* readLines(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal: AbortSignal
): AsyncGenerator<ICompletionChunk> {
  const decoder = new TextDecoder();
  let buffered = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        return;
      }
      buffered += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) {
          yield JSON.parse(line) as ICompletionChunk;
        }
      }
    }
  } catch (error) {
    if (!signal.aborted) {
      throw error;
    }
  } finally {
    reader.releaseLock();
  }
}
