<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="fr_FR">
<context>
    <name>GeoFaham</name>
    <message>
        <source>GeoFaham</source>
        <translation>GeoFaham</translation>
    </message>
    <message>
        <source>GeoFaham chat</source>
        <translation>Discussion GeoFaham</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Envoyer</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Vous</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>Problème</translation>
    </message>
    <message>
        <source>Your question (Ctrl+Enter to send)</source>
        <translation>Votre question (Ctrl+Entrée pour envoyer)</translation>
    </message>
    <message>
        <source>Ask a disaster-response question, e.g. &quot;Which hospitals lie within 1 km of the Eaton fire perimeter?&quot;</source>
        <translation>Posez une question sur la réponse aux catastrophes, par ex. « Quels hôpitaux se trouvent à moins de 1 km du périmètre de l&apos;incendie d&apos;Eaton ? »</translation>
    </message>
    <message>
        <source>GeoFaham cannot start because these Python packages are missing: {names}. Install them with: {command} (or run &quot;{setup}&quot; in the GeoFaham source folder), then restart QGIS.</source>
        <translation>GeoFaham ne peut pas démarrer car ces paquets Python sont absents : {names}. Installez-les avec : {command} (ou lancez « {setup} » dans le dossier source de GeoFaham), puis redémarrez QGIS.</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Annuler</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>Planification…</translation>
    </message>
    <message>
        <source>Plan: </source>
        <translation>Plan : </translation>
    </message>
    <message>
        <source>Step {n}: {goal}</source>
        <translation>Étape {n} : {goal}</translation>
    </message>
    <message>
        <source>Something went wrong: {message}. Details are in the GeoFaham log panel.</source>
        <translation>Une erreur est survenue : {message}. Les détails sont dans le journal GeoFaham.</translation>
    </message>
    <message>
        <source>A question is still running; wait for its answer.</source>
        <translation>Une question est en cours ; attendez sa réponse.</translation>
    </message>
</context>
</TS>
