import { ServerConnection } from '@jupyterlab/services';

/** Whether an error means the server could not be reached at all. */
export function isConnectionError(error: unknown): boolean {
  if (error instanceof ServerConnection.NetworkError) {
    return true;
  }
  if (error instanceof ServerConnection.ResponseError) {
    // A proxy in front of a stopped server answers 502/503/504.
    return [0, 502, 503, 504].includes(error.response.status);
  }
  return error instanceof TypeError && /fetch/i.test(error.message);
}

/** The HTTP status of a failed request, if it got an answer. */
export function statusOf(error: unknown): number | undefined {
  return error instanceof ServerConnection.ResponseError
    ? error.response.status
    : undefined;
}

/** An error in plain words, for a notification or a notice in the panel. */
export function describeError(error: unknown): string {
  if (isConnectionError(error)) {
    return 'The Jupyter server cannot be reached. Check that it is running; the panel reconnects by itself.';
  }
  const status = statusOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (status === 404 && /^(Not Found|)$/.test(message.trim())) {
    return "The server has no AI agent: jupyter-loop's server extension is not running, or is too old.";
  }
  if (status === 403) {
    return `Not allowed: ${message}`;
  }
  return message || 'Unknown error';
}
