"""A prompt becoming model requests, and the model's tool calls becoming editor updates.

``loop`` is ``Turn``, one ``session/prompt`` from the prompt to its stop reason, and
``prompt`` what the prompt starts (the text for the model or the command it runs);
``request`` builds and streams one model request, ``collect`` keeps the response as
history; ``execute`` runs one tool call (``policy`` says who may run it). The turn
uses the features, the session, the store and the protocol; only the top-level agent
imports it.
"""
