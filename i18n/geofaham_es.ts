<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="es_ES">
<context>
    <name>GeoFaham</name>
    <message>
        <source>GeoFaham</source>
        <translation>GeoFaham</translation>
    </message>
    <message>
        <source>GeoFaham chat</source>
        <translation>Chat de GeoFaham</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>Enviar</translation>
    </message>
    <message>
        <source>You</source>
        <translation>Usted</translation>
    </message>
    <message>
        <source>Problem</source>
        <translation>Problema</translation>
    </message>
    <message>
        <source>Your question (Ctrl+Enter to send)</source>
        <translation>Su pregunta (Ctrl+Intro para enviar)</translation>
    </message>
    <message>
        <source>Ask a disaster-response question, e.g. &quot;Which hospitals lie within 1 km of the Eaton fire perimeter?&quot;</source>
        <translation>Haga una pregunta de respuesta a desastres, p. ej. «¿Qué hospitales están a menos de 1 km del perímetro del incendio de Eaton?»</translation>
    </message>
    <message>
        <source>GeoFaham cannot start because these Python packages are missing: {names}. Install them with: {command} (or run &quot;{setup}&quot; in the GeoFaham source folder), then restart QGIS.</source>
        <translation>GeoFaham no puede iniciarse porque faltan estos paquetes de Python: {names}. Instálelos con: {command} (o ejecute «{setup}» en la carpeta de código de GeoFaham) y reinicie QGIS.</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>Cancelar</translation>
    </message>
    <message>
        <source>Planning…</source>
        <translation>Planificando…</translation>
    </message>
    <message>
        <source>Plan: </source>
        <translation>Plan: </translation>
    </message>
    <message>
        <source>Step {n}: {goal}</source>
        <translation>Paso {n}: {goal}</translation>
    </message>
    <message>
        <source>Something went wrong: {message}. Details are in the GeoFaham log panel.</source>
        <translation>Algo salió mal: {message}. Los detalles están en el panel de registro de GeoFaham.</translation>
    </message>
    <message>
        <source>A question is still running; wait for its answer.</source>
        <translation>Hay una pregunta en curso; espere su respuesta.</translation>
    </message>
</context>
</TS>
