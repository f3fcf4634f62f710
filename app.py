"""Attention lab: placeholder entry point until the model views land."""

import streamlit as st


def main() -> None:
    st.set_page_config(page_title="Attention lab", layout="wide")
    st.title("Attention lab")
    st.write("model loading…")


if __name__ == "__main__":
    main()
