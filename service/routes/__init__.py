"""HTTP routes: parse, call one service function, return its model. Errors map in service.app."""
