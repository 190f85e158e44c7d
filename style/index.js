import './base.css';
import './agent.css';
import './history.css';
