"""Controller-side reporting: the recorder, and the JSON, JUnit and terminal writers."""
