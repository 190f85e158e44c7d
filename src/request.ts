import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/**
 * Call the jupyter-loop REST API.
 *
 * @param endPoint - path under `/api/jupyter-loop/`
 * @param init - fetch options; a JSON body is sent as is
 * @param settings - the server connection (by default, the page's)
 * @returns the decoded JSON reply
 * @throws ServerConnection.ResponseError carrying the server's message
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, 'api', 'jupyter-loop', endPoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const text = await response.text();
  let data: unknown = null;
  if (text.length > 0) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!response.ok) {
    const message =
      typeof data === 'object' && data !== null && 'message' in data
        ? String((data as { message: unknown }).message)
        : String(data || response.statusText);
    throw new ServerConnection.ResponseError(response, message);
  }
  return data as T;
}

/**
 * A JSON POST body for {@link requestAPI}.
 */
export function postJSON(body: unknown): RequestInit {
  return { method: 'POST', body: JSON.stringify(body) };
}
